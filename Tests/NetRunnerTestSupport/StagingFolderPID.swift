/// Process ids for the tests of folders named after the process that made them.
public enum StagingFolderPID {
    /// A pid no process can have: Linux gives pids below `pid_max`, which cannot exceed
    /// 4,194,304 (`PID_MAX_LIMIT` on 64-bit); macOS's stay below 100,000.
    ///
    /// A process that ended is no substitute: while the whole suite spawns processes in
    /// parallel, its pid can be given to another before the check.
    public static let neverAlive: Int32 = 4_194_304
}
