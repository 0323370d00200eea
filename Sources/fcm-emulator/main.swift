import FCMEmulator

await EmulatorCommand.runFromCommandLine()
