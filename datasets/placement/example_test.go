package placement_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/datasets/placement"
)

// Example places the rows of two shards in 4 partitions, holding out about
// 20% for testing, and recomputes the public layout from the shard names
// and row counts alone.
func Example() {
	shards := []placement.Shard{{Name: "dt=1/part-0.csv", Rows: 50}, {Name: "dt=2/part-0.csv", Rows: 30}}
	rows, train, sizes, err := placement.PartitionLayout(shards, 7, 0.2, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rows:", rows, "training:", train, "partition sizes:", sizes)
	fmt.Println("row 1 of dt=1/part-0.csv: partition", placement.PartitionOf(7, "dt=1/part-0.csv", 1, 4),
		"held out:", placement.HeldOut(7, "dt=1/part-0.csv", 1, 0.2))

	// Per privacy ID: the rows kept of an ID with 6 rows, at most 2 per ID.
	kept := placement.BoundContributions(7, "user-42", 6, 2)
	fmt.Println("ranks kept of user-42:", kept)
	// Output:
	// rows: 80 training: 67 partition sizes: [12 22 17 16]
	// row 1 of dt=1/part-0.csv: partition 0 held out: false
	// ranks kept of user-42: [2 3]
}
