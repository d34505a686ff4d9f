/// The words messages use for each kind's token route and provider, so that a token for
/// another kind can name the route it came from and the one the provider needs.
extension AuthorizationScope.Kind {
    /// Every kind.
    package static let all: [AuthorizationScope.Kind] = [.vehicle, .trip, .tracking, .task]

    /// The backend route that mints this kind's tokens, as the platform's sample backends
    /// name them: `driver token route` (`/token/driver/{vehicleId}`), `consumer token route`, …
    package var tokenRoute: String {
        switch self {
        case .vehicle: "driver token route"
        case .trip: "consumer token route"
        case .tracking: "delivery consumer (tracking ID) token route"
        default: "delivery task token route"
        }
    }

    /// The provider that asks for this kind's tokens: `a driver provider`, `a consumer provider`, …
    package var provider: String {
        switch self {
        case .vehicle: "a driver provider"
        case .trip: "a consumer provider"
        case .tracking: "a consumer provider following a tracking ID"
        default: "a consumer provider following a task"
        }
    }
}
