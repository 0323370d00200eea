import CMallocArenas
import FCMClient
import Foundation

/// What `main` checks before anything else runs.
package enum StartupCheck {
    /// Exits 1 with a message when the open-file limit is too low for the runtime to start: the signal
    /// handlers' dispatch sources would otherwise stop the process with SIGILL.
    package static func requireDescriptors() {
        guard let shortage = DescriptorBudget.processShortage else { return }
        FileHandle.standardError.write(Data("error: \(shortage)\n".utf8))
        exit(1)
    }

    /// Two malloc arenas for every thread. glibc gives each thread that allocates while another holds the lock an
    /// arena of its own (up to eight per core), and each keeps the memory freed in it: the default fleet's apply
    /// (`scripts/bench/fleet.py`) peaked at 193-226 MiB with them and 175-188 MiB with two, at the same CPU time
    /// (one arena: 172 MiB, 5-13 % more CPU). `MALLOC_ARENA_MAX` in the environment still wins.
    package static func limitMallocArenas() {
        // getenv, not ProcessInfo's environment: that copies every variable into a dictionary, first thing.
        if getenv("MALLOC_ARENA_MAX") == nil { _ = fcm_limit_malloc_arenas(2) }
    }
}
