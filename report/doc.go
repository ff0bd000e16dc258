// Package report draws a run as one HTML page for a person: the verdict, a
// timeline of what every node believed and what the nemesis did,
// violations too short to see magnified, the clients' operations over
// time, a space-time diagram of the messages (or, for real servers, the
// bytes on each link), lock lanes for a mutex run, the nodes' metrics over
// time, each check's explanation and evidence, and the counts.
//
// The contract: the input is a history and its results (verdict.Results)
// alone, so `coup run` and `coup check --report` draw the same page from the
// same history; the output is one self-contained page (inline SVG and CSS,
// one small script it is readable without), and WriteCheckFiles writes the
// pages it links (porcupine's) beside it. Every time the page draws is
// saturated to the run's window and every list it draws is bounded, so a
// crafted or damaged history can make it neither loop nor grow without
// bound (docs/results.md lists the limits). Every string from the history
// is escaped by html/template.
//
// The drawing, file by file: model.go builds the page's model from the
// history (lanes, claims, faults, messages); timeline.go draws the
// timeline and axis.go its ticks; zoom.go magnifies the violations;
// spacetime.go draws the messages; mutex.go the lock lanes; metrics.go and
// chart.go the metrics; ops.go the operations' latency and throughput;
// links.go the links view of a real servers' run; evidence.go what a real
// server's beliefs were read from, on hover and in the evidence; fold.go folds long
// values; palette.go gives every node, fault and violation its colour;
// page.go and script.go are the page and its script, sections.go the
// templates of the operations and links sections and the header's words.
package report
