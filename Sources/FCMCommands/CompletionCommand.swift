import ArgumentParser
import FCMViews

/// `fcmctl completion bash|zsh|fish`: the shell completion script, as kubectl and gh print theirs. The
/// release archive carries the same scripts under share/.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion", abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            bash:  source <(fcmctl completion bash)     (or save it in /etc/bash_completion.d/fcmctl)
            zsh:   fcmctl completion zsh > "${fpath[1]}/_fcmctl"
            fish:  fcmctl completion fish > ~/.config/fish/completions/fcmctl.fish
            """)

    enum Shell: String, ExpressibleByArgument, CaseIterable {
        case bash, zsh, fish
    }

    @Argument(help: "bash, zsh or fish.")
    var shell: Shell

    func run() throws {
        let kind: CompletionShell =
            switch shell {
            case .bash: .bash
            case .zsh: .zsh
            case .fish: .fish
            }
        Console.current.out(FCMCtl.completionScript(for: kind))
    }
}
