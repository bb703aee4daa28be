import MapcCLI
import MapcExamples

// A project's own `mapc` registers its policies here, before running the commands.
registerUnCloudNotesPolicies()
MapcCommand.runMain()
