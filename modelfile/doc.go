// Package modelfile is the model file of stabpriv: a released model with
// everything needed to apply it to raw rows and to verify its claim (the
// Released type), its JSON format (Format, read and written by Read and
// Write), Verify, which rebuilds the certificate from what the file
// publishes, and Predict.
//
// A model file holds the released weights, the certificate (package dp),
// the declared schema, the public preprocessing (datasets/preprocess), the
// stability analysis, the split and, for a partitioned fit, the partition
// layout. Everything in it is public or privatized; statistics of the data
// exist only in Diagnostics, which is never written. Read refuses fields
// it does not know, so no field can carry anything else.
//
// Verify checks a file's internal consistency, the way a third party
// would: from the published inputs (the run constants, the mechanism, eps
// and delta, the noise source, the schema, the preprocessing's constants)
// it asks the release method (package release) to rebuild the certificate
// and the stability analysis, rebuilds the pipeline's notes, the split and
// the partition layout, and requires the file to equal the rebuilt one
// (docs/DESIGN.md, section 6). It does not check provenance: a file has no
// signature.
package modelfile
