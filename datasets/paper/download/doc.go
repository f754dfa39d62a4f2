// Package download fetches the data sets of package paper from their
// canonical online sources, every download verified by its SHA-256
// (datasets/fetch), and extracts them into a folder ready for the data
// set's loader.
//
// It is apart from package paper, whose loaders never reach the network,
// so that a program that only reads the data sets (the stabpriv command,
// the experiments) links no HTTP client.
//
// Adult, LastFM and TCGA download one data set each; Fetch downloads a
// registered data set by its name (paper.Names) when a sum of its download
// is recorded; Sources and SourcesOf list the canonical sources.
package download
