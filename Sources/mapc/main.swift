import MapcCLI

MapcCommand.runMain()
