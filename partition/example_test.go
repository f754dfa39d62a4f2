package partition_test

import (
	"context"
	"fmt"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

func ExampleFit() {
	// The embedded table as three shards, as a distributed store holds it.
	table, schema, err := datasets.DefaultTable()
	if err != nil {
		fmt.Println(err)
		return
	}
	var shards []*datasets.Table
	for s := range 3 {
		shard := table.Slice(s*table.Len()/3, (s+1)*table.Len()/3)
		shard.Source, shard.First = fmt.Sprintf("part-%d.csv", s), 0
		shards = append(shards, shard)
	}
	r, err := partition.Fit(context.Background(), shards, schema, dp.Budget{Epsilon: 1}, private.Options{
		Mechanism: perturb.Gamma, Auto: true, TestFrac: 0.2, Seed: 1, Noise: perturb.Seeded(3),
	}, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = modelfile.Verify(r)
	fmt.Println(r.Partitions.Count, len(r.Partitions.Shards), r.Certificate.SensitivityRoute, err)

	// Output:
	// 4 3 partitioned/strongly-convex-sgd <nil>
}
