// Package datasets holds labelled data and reads it from files: the data
// and its formats. Preparing data for training lives in datasets/preprocess,
// the paper's data sets in datasets/paper, downloading in datasets/fetch.
//
// A Dataset holds the feature matrix, the labels encoded for a loss (-1/+1
// for binary tasks, 0..K-1 for multiclass tasks, real values for regression),
// the feature and class names, and Notes: what a loader or a preprocessing
// step did that a reader of the results must know. Certificates list the
// notes among the assumptions not covered by the privacy guarantee.
//
// # Why the split
//
// Each package is one concept with its own reasons to change, and a user
// imports only what the task needs:
//
//   - datasets (this package): Dataset, the CSV formats (Table, read by
//     ReadTable, ReadTableFile or a TableReader in chunks of rows: a data
//     file as the user hands it over, before the schema gives its columns a
//     meaning; ReadCSV and ReadCSVFile, on the same reader: a header row,
//     numeric features, one label column), the Schema with its bounds and
//     schema files, the order of class names (SortClassNames), Split and
//     SplitIndex (seeded, optionally stratified), Default (the embedded
//     Wisconsin diagnostic breast cancer set, 569 x 30). The layer every
//     other one builds on. Its records
//     are split and its cells parsed by datasets/internal/rawcsv.
//   - datasets/libsvm: the sparse LibSVM text format, another file format.
//   - datasets/categorical: class names to labels (EncodeClasses) and
//     categorical columns to indicator columns (OneHotEncoder), for the
//     loaders that read classes and categories from their files.
//   - datasets/preprocess: maps from data to model inputs (the standardizer,
//     the unit-ball map with its bias feature, the truncated SVD). They are
//     where privacy assumptions enter (a fitted statistic is not private, a
//     per-row map costs nothing), so they are documented together.
//   - datasets/paper: the registry of the stability-privacy paper's data
//     sets (UCI Adult, LastFM Asia, the gene expression set in the TCGA
//     layout): each one file with its loader, folder, marker file, default
//     lambdas, protocol notes and canonical sources. A new data set is one
//     file and one registry line; the experiments read the registry.
//   - datasets/placement: where each row of a partitioned fit goes (its
//     partition, its side of the split, the rows kept per privacy ID), by
//     seeded hashes of its position or its privacy ID, never of a cell;
//     the shard names and the reader of a partitioned fit's shards.
//   - datasets/synthetic: data sets drawn from planted models (Logistic,
//     LinearGaussian), with their planted parameter.
//   - datasets/fetch: the verified download cache and archive extraction,
//     the only part that touches the network; it imports neither this
//     package nor gonum.
//
// Every file is read under stated caps, checked before what is read is
// held (MaxLineBytes, MaxColumns, MaxRows and MaxDataLines for a data CSV;
// MaxBoundsBytes and MaxSchemaBytes, with their line caps, for the bounds
// and schema files), and every name it brings (a column, a class, a
// category, a shard) follows one rule, CheckName, the rule of the model
// file that holds it.
//
// Every function returns a new Dataset and leaves its input unchanged.
// Errors wrap ErrFormat (bad file content) or ErrInvalid (bad arguments),
// in the subpackages too; nothing panics on user data.
package datasets
