package preflight

// RunWithSignals is Run with the signals it would receive on a channel.
var RunWithSignals = run
