// Package datasets loads labelled data sets and prepares them for private
// training.
//
// A Dataset holds the feature matrix, the labels encoded for a loss (-1/+1
// for binary tasks, 0..K-1 for multiclass tasks, real values for regression),
// the feature and class names, and Notes: what a loader or a preprocessing
// step did that a reader of the results must know. Certificates list the
// notes among the assumptions not covered by the privacy guarantee.
//
// # Loaders
//
// The generic paths are ReadCSV and ReadCSVFile (a header row, numeric
// features, one label column), ReadLibSVM (the sparse LibSVM text format),
// and Default, the embedded Wisconsin diagnostic breast cancer set (569 x 30).
//
// The real data sets of the stability-privacy paper are read from a
// directory given by the caller (these loaders never reach the network):
//
//   - LoadAdult reads UCI Adult's adult.data and adult.test, drops the rows
//     with a missing value (45,222 remain), keeps the six numeric attributes
//     and one-hot encodes the eight categorical ones (OneHotEncoder, fitted
//     with FitOneHot); labels >50K = +1. LoadAdultSplit keeps UCI's own
//     train/test split instead of concatenating the files.
//   - LoadLastFM reads SNAP's LastFM Asia network (7,624 users, 18 country
//     classes). Without the artist-likes file (as in the offline copy) the
//     features are derived from the graph (adjacency rows, optionally with
//     2-hop counts), reduced by a truncated SVD, and a Note says so.
//   - LoadTCGA and ReadTCGA read the UCI "gene expression cancer RNA-Seq"
//     layout (data.csv or data.csv.gz with one column per gene, and
//     labels.csv), which the gene_all folder also uses.
//
// For users who are online, Fetch downloads a file into a cache directory
// and returns it only when its SHA-256 matches (every download is verified);
// Sources lists the canonical sources with their recorded sums, and
// FetchAdult, FetchLastFM and FetchTCGA fetch (and, for archives, extract
// with ExtractZip or ExtractTarGz) a whole data set, ready for its loader.
//
// Synthetic data for tests and examples: LogisticData (a planted logistic
// model, rows in the unit ball) and LinearGaussian (a planted linear model).
//
// # Preprocessing
//
// Split divides a data set into seeded, optionally stratified, training and
// test sets. Preprocessing follows the data flow of the design notes:
//
//   - FitTruncatedSVD fits a randomized truncated SVD (no centering);
//     SVDProjection.Transform projects rows on its components, TruncatedSVD
//     does both, and ReduceSVD fits it on a training split and projects the
//     training and test splits, with a Note. The projection is a statistic
//     of the data that is not privatized.
//   - FitStandardizer fits column statistics on the training split only;
//     Transform applies them to the training and test splits. The statistics
//     themselves are not privatized, and the notes say so.
//   - ScaleRows clips rows to norm kappa, a per-row map that costs no
//     privacy; AddBias appends a constant feature; UnitBallWithBias is the
//     paper's x' = [x, 1]/sqrt(2) map, after which every row has norm at most
//     1, the bias included (a bias is a constant feature and counts in kappa).
//
// The experiments package chains these steps into the paper's protocol.
//
// Every function returns a new Dataset and leaves its input unchanged,
// except ScaleRows, which works in place on a matrix. Errors wrap ErrFormat
// (bad file content) or ErrInvalid (bad arguments); nothing panics on user
// data.
package datasets
