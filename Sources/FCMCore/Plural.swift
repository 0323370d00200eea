/// "1 group", "3 groups": English plurals for counts in sentences.
package func plural(_ count: Int, _ noun: String) -> String { count == 1 ? "1 \(noun)" : "\(count) \(noun)s" }
