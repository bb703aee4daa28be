import ArgumentParser

/// mapc's exit statuses, documented in docs/cli.md.
public enum MapcExitCode {
    /// Success; for `check`, no errors (warnings allowed unless --strict).
    public static let success: Int32 = 0
    /// The input is wrong: schema or mapping diagnostics, or data that does not fit the schema.
    public static let invalidInput: Int32 = 1
    /// A store or file problem: missing, unreadable, not a mapc store, or of another version.
    public static let storeError: Int32 = 2
    /// A migration could not be completed from the data (an expression failed on an object, or the
    /// result broke the destination schema's rules); the store was left unchanged.
    public static let migrationFailed: Int32 = 3
    /// The command line itself is wrong (ArgumentParser's EX_USAGE).
    public static let usage: Int32 = 64
}
