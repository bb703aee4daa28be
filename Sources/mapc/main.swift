import MapcCLI
import MapcExamples
import MapcKit

// The crash-testing harness's hook; inactive unless MAPC_FAULT is set.
FaultInjection.installFromEnvironment()

// A project's own `mapc` registers its policies here, before running the commands.
registerUnCloudNotesPolicies()
MapcCommand.runMain()
