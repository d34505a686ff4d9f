import FleetAuthCore
import Foundation

/// Reading a body whose key names no preset uses, and weighing every expiry field a body
/// states.
extension EndpointChecker {
    /// The expiry keys the presets read, with every unit a preset reads them in.
    static let knownExpiryKeys: [String: [TokenResponseFormat.ExpiryUnit]] = {
        var keys: [String: [TokenResponseFormat.ExpiryUnit]] = [:]
        for format in TokenResponseFormat.presets {
            if case .json(_, let field?) = format.body { keys[field.key, default: []].append(field.unit) }
        }
        return keys
    }()

    /// A shape for a JSON body with key names no preset knows: the string that decodes as a
    /// JWT, and the number that, read in some unit, agrees with its `exp`.
    func inferredShape(of response: TransportResponse) -> (String, TokenResponseFormat, Double?)? {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else { return nil }
        guard
            let (tokenKey, token, claims) = object.sorted(by: { $0.key < $1.key }).lazy.compactMap({
                entry -> (String, String, JWTClaims)? in
                guard let text = entry.value as? String, let claims = try? JWTDecoder.decode(text) else { return nil }
                return (entry.key, text, claims)
            }).first
        else { return nil }
        guard let exp = claims.expiresAt else { return (token, .json(tokenKey: tokenKey), nil) }
        let serverNow = TokenResponseParser.serverDate(response) ?? clock.now()
        let units: [TokenResponseFormat.ExpiryUnit] = [.absoluteSeconds, .absoluteMilliseconds, .secondsFromNow]
        // Keys that look like expiries first, so `expiresAt` wins over an unrelated number.
        let numbers = object.compactMap { key, value in (value as? NSNumber).map { (key, $0.doubleValue) } }
            .sorted {
                ($0.0.lowercased().contains("exp") ? 0 : 1, $0.0) < ($1.0.lowercased().contains("exp") ? 0 : 1, $1.0)
            }
        for (key, value) in numbers {
            for unit in units {
                let format = TokenResponseFormat.json(tokenKey: tokenKey, expiry: .init(key: key, unit: unit))
                if (try? TokenResponseParser(format: format).check(value, against: exp, serverNow: serverNow)) != nil {
                    return (token, format, value)
                }
            }
        }
        return (token, .json(tokenKey: tokenKey), nil)
    }

    /// Fails every known expiry field besides the format's own that agrees with the JWT's
    /// `exp` in none of the units the presets read it in: a body must not contradict itself.
    func checkOtherExpiryFields(
        _ response: TransportResponse, format: TokenResponseFormat, token: String, into findings: inout [Finding]
    ) {
        guard options.format == nil,
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let exp = try? JWTDecoder.decode(token).expiresAt
        else { return }
        let serverNow = TokenResponseParser.serverDate(response) ?? clock.now()
        let own: String? = if case .json(_, let field?) = format.body { field.key } else { nil }
        for (key, units) in Self.knownExpiryKeys.sorted(by: { $0.key < $1.key }) where key != own {
            guard let value = (object[key] as? NSNumber)?.doubleValue else { continue }
            let agrees = units.contains { unit in
                let reading = TokenResponseFormat.json(tokenKey: "token", expiry: .init(key: key, unit: unit))
                return (try? TokenResponseParser(format: reading).check(value, against: exp, serverNow: serverNow))
                    != nil
            }
            if !agrees {
                findings.append(
                    Finding(
                        "expiry-agreement", .failure,
                        "the body's \(key) (\(value)) agrees with the JWT's exp in no unit it is known in",
                        fix: "state one expiry, in the unit its name promises, or none"))
            }
        }
    }
}
