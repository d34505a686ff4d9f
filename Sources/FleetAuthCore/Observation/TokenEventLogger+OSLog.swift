#if canImport(os)
    public import os

    extension TokenEventLogger {
        /// A logger writing to the unified logging system through `osLogger`.
        ///
        /// Levels map to `OSLogType`: debug → `.debug`, info → `.info`, warning → `.default`,
        /// error → `.error`. Lines are marked public: they hold scopes and fingerprints, never a
        /// token's value.
        /// - Parameters:
        ///   - osLogger: where lines go, e.g. `Logger(subsystem: "com.example.driver", category: "auth")`.
        ///   - minimumLevel: the lowest level written. Default ``TokenEventLevel/info``.
        public init(osLogger: Logger, minimumLevel: TokenEventLevel = .info) {
            self.init(minimumLevel: minimumLevel) { level, line in
                let type: OSLogType
                switch level {
                case .debug: type = .debug
                case .info: type = .info
                case .warning: type = .default
                case .error: type = .error
                }
                osLogger.log(level: type, "\(line, privacy: .public)")
            }
        }
    }
#endif
