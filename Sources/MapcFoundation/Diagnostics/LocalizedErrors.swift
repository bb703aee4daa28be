import Foundation

// Every error mapc throws describes itself in the library's words (what is wrong, where, how to
// fix it), so an app can show `error.localizedDescription` as it is. The command line adds its
// own flags where it prints them.

extension MapcError: LocalizedError {
    public var errorDescription: String? { description }
}

extension DiagnosticsError: LocalizedError {
    public var errorDescription: String? { description }
}

extension Diagnostic: LocalizedError {
    public var errorDescription: String? { description }
}
