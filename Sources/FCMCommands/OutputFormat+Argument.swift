import ArgumentParser
import FCMCore
import FCMViews

extension OutputFormat: ExpressibleByArgument {}
extension ColorChoice: ExpressibleByArgument {}
extension RefreshMode: ExpressibleByArgument {}
