// Package categorical maps categorical values to numbers: class names to
// labels (EncodeClasses) and categorical columns to indicator columns
// (OneHotEncoder).
//
// EncodeClasses gives -1/+1 for two classes and 0..K-1 for more, in the
// order of datasets.SortClassNames; FitOneHot sorts each column's
// categories, so that the layout does not depend on the order of the
// rows. The loaders of datasets/libsvm and datasets/paper use them on
// classes and categories they read from their files; a private fit
// declares them in its schema instead (datasets.Schema,
// datasets/preprocess). Encode's error for a category not seen by
// FitOneHot wraps ErrUnknownCategory, which wraps datasets.ErrFormat.
package categorical
