// An app that imports this module gets the token core and the fleet-service client with
// it: every type in its public API comes from one of the two.
@_exported public import FleetAuthCore
@_exported public import FleetAuthFleetService
