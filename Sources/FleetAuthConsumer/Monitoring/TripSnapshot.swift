public import Foundation

/// A trip's state as the fleet service reported it.
public struct TripSnapshot: Sendable, Equatable {
    /// The trip.
    public let tripID: String
    /// `tripStatus`, such as `ENROUTE_TO_PICKUP`, if present.
    public let status: String?
    /// The vehicle serving the trip, if assigned.
    public let vehicleID: String?
    /// Metres left to drive, if known.
    public let remainingDistanceMeters: Double?
    /// The vehicle's last latitude and longitude, if known.
    public let vehicleCoordinate: (latitude: Double, longitude: Double)?
    /// When the snapshot arrived, by the device clock.
    public let receivedAt: Date

    /// Creates a snapshot.
    public init(
        tripID: String, status: String?, vehicleID: String?, remainingDistanceMeters: Double?,
        vehicleCoordinate: (latitude: Double, longitude: Double)?, receivedAt: Date
    ) {
        self.tripID = tripID
        self.status = status
        self.vehicleID = vehicleID
        self.remainingDistanceMeters = remainingDistanceMeters
        self.vehicleCoordinate = vehicleCoordinate
        self.receivedAt = receivedAt
    }

    /// Reads the fleet service's trip JSON, or a delivery fleet's task-tracking JSON (its
    /// `state` as the status, its vehicle's location); `nil` if the body is not a JSON object.
    init?(tripID: String, body: Data, receivedAt: Date) {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else { return nil }
        let lastLocation = object["lastLocation"] ?? object["vehicleLocation"]
        let location = (lastLocation as? [String: Any])?["location"] as? [String: Any]
        let latitude = (location?["latitude"] as? NSNumber)?.doubleValue
        let longitude = (location?["longitude"] as? NSNumber)?.doubleValue
        self.init(
            tripID: tripID, status: (object["tripStatus"] ?? object["state"]) as? String,
            vehicleID: object["vehicleId"] as? String,
            remainingDistanceMeters: (object["remainingDistanceMeters"] as? NSNumber)?.doubleValue,
            vehicleCoordinate: latitude.flatMap { lat in longitude.map { (lat, $0) } }, receivedAt: receivedAt)
    }

    /// Equal when every field is equal.
    public static func == (lhs: TripSnapshot, rhs: TripSnapshot) -> Bool {
        lhs.tripID == rhs.tripID && lhs.status == rhs.status && lhs.vehicleID == rhs.vehicleID
            && lhs.remainingDistanceMeters == rhs.remainingDistanceMeters
            && lhs.vehicleCoordinate?.latitude == rhs.vehicleCoordinate?.latitude
            && lhs.vehicleCoordinate?.longitude == rhs.vehicleCoordinate?.longitude && lhs.receivedAt == rhs.receivedAt
    }
}

/// One result of following a trip or a shipment: a snapshot or the error that replaced it.
public struct TripUpdate: Sendable {
    /// What was followed, by its ID: the trip's, or the shipment's tracking ID (``scope``
    /// says which).
    public let followedID: String
    /// What was followed: a trip, or a tracking ID.
    public let scope: AuthorizationScope
    /// The snapshot, or why there is none this time.
    public let result: Result<TripSnapshot, FleetServiceError>

    /// An update as given, for an app's test of a rider's screen; ``followedID`` is the
    /// scope's ID.
    public init(scope: AuthorizationScope, result: Result<TripSnapshot, FleetServiceError>) {
        (followedID, self.scope, self.result) = (scope.id, scope, result)
    }
}
