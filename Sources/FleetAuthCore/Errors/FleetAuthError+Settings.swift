package import Foundation

/// How a policy's setting that cannot work is refused: one rule for `RefreshPolicy` and
/// `RetryPolicy`.
extension FleetAuthError {
    /// `invalidConfiguration` saying what is wrong with a setting of `policy`
    /// (`` RetryPolicy: `jitter` must be at most 1 … ``).
    package static func invalidSetting(of policy: String, _ message: String) -> FleetAuthError {
        FleetAuthError(reason: .invalidConfiguration, message: "\(policy): \(message)")
    }

    /// Throws ``invalidSetting(of:_:)`` for the first of `settings` that is not a finite
    /// number, 0 or more, naming it and its value.
    package static func requireFiniteAndNotNegative(
        _ settings: KeyValuePairs<String, TimeInterval>, of policy: String
    ) throws(FleetAuthError) {
        for (name, value) in settings where !(value.isFinite && value >= 0) {
            throw invalidSetting(of: policy, "`\(name)` must be a finite number, 0 or more (it is \(value)).")
        }
    }
}
