/**
 * Environment defaults for processes that host the local stack (`npm start`, the test runner's global
 * setup). Imported first, for its side effect: the Powertools logger and metrics read their settings
 * once, when the handler modules load, which is before `startLocalStack` applies the functions'
 * environment. Values already set by the user win.
 */
// No EMF metric lines on stdout locally: there is no CloudWatch agent to read them.
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";
// Development machines run Node 20; the SDK's notice that its 2027 releases need Node 22 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
process.env.POWERTOOLS_TRACE_ENABLED ??= "false";
// With tracing off, the X-Ray SDK (loaded by the Powertools tracer) needs no automatic context: in
// automatic mode it installs cls-hooked's async hooks, which track every promise of the process (in a
// CPU profile of the import suite, a tenth of its worker's time). Manual mode installs none. Lambda
// never sees this variable.
process.env.AWS_XRAY_MANUAL_MODE ??= "true";

export {};
