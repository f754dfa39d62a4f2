package download_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/paper/download"
)

// The canonical sources of each registered data set, and whether a sum of
// the download is recorded (Fetch downloads only those).
func Example() {
	for _, name := range paper.Names() {
		for _, s := range download.SourcesOf(name) {
			fmt.Printf("%-8s %-35s sum recorded: %v\n", name, s.Name, s.SHA256 != "")
		}
	}
	// Output:
	// adult    adult.data                          sum recorded: true
	// adult    adult.test                          sum recorded: true
	// lastfm   lastfm_asia.zip                     sum recorded: false
	// gene_all TCGA-PANCAN-HiSeq-801x20531.tar.gz  sum recorded: true
}
