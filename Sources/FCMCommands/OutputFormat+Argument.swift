import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

extension OutputFormat: ExpressibleByArgument {}
extension ColorChoice: ExpressibleByArgument {}
extension RefreshMode: ExpressibleByArgument {}
