// Package paper is the registry of the data sets of the stability-privacy
// paper's experiments (Watson, Rozemberczki & Sarkar), with their loaders.
//
// Every entry is a DataSet value defined in the file of its loader: its
// name, its folder under a data directory and the marker file that
// identifies the folder, Load with the paper's options, its default lambda
// grid, whether the loader already reduces the features, the protocol notes
// the outputs must carry. The experiments package and the command
// line read the registry (All, Names, Lookup) instead of keeping their own
// per-data-set tables.
//
// The loaders read a directory given by the caller and never reach the
// network:
//
//   - LoadAdult reads UCI Adult's adult.data and adult.test, drops the rows
//     with a missing value (45,222 remain), keeps the six numeric attributes
//     and one-hot encodes the eight categorical ones; labels >50K = +1.
//     LoadAdultSplit keeps UCI's own train/test split.
//   - LoadLastFM reads SNAP's LastFM Asia network (7,624 users, 18 country
//     classes). Without the artist-likes file (as in the offline copy) the
//     features are derived from the graph (adjacency rows, optionally with
//     2-hop counts), reduced by a truncated SVD, and a Note says so.
//   - LoadTCGA and ReadTCGA read the UCI "gene expression cancer RNA-Seq"
//     layout (data.csv or data.csv.gz, labels.csv), which the gene_all
//     folder also uses.
//
// Package datasets/paper/download downloads (datasets/fetch, every download
// verified by its SHA-256) and extracts a whole data set, ready for its
// loader, and lists every canonical source: apart from this package, so that
// a program that only reads the data sets links no HTTP client.
//
// # Adding a data set
//
// Write one file holding the loader (a func(dir string) (*datasets.Dataset,
// error) at the paper's options, with its tests beside it) and an unexported
// DataSet value, add one line to the registry in registry.go and its
// canonical sources to package download. The name is then accepted by
// protocol.Config.Dataset and the sweep and featsel commands,
// with its folder, marker, lambdas and notes.
package paper
