import ArgumentParser

package enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text
    case json
    case github
}
