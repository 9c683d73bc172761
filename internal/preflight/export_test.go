package preflight

// RunWithSignals is Run with the signals it would receive on a channel,
// and grace in place of KillGrace.
var RunWithSignals = run
