package difftest

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"sync"
	"testing"

	"github.com/shardkey/shardkey/shardconf"
)

// The Go algorithms of t_algo, registered once per process under names
// no other test uses (registration is process-wide and permanent).
const (
	algoSplitType   = "DIFFTEST_SPLIT"                        // type: DIFFTEST_SPLIT
	algoDecadeClass = "org.shardkey.difftest.DecadeAlgorithm" // CLASS_BASED algorithmClassName
)

var (
	registerOnce sync.Once
	registerErr  error
)

func registerAlgorithms(t testing.TB) {
	t.Helper()
	registerOnce.Do(func() {
		registerErr = shardconf.RegisterAlgorithm(algoSplitType, newSplitAlgorithm)
		if registerErr == nil {
			registerErr = shardconf.RegisterAlgorithm(algoDecadeClass, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
				return decadeAlgorithm{}, nil
			})
		}
	})
	if registerErr != nil {
		t.Fatal(registerErr)
	}
}

// tenantHint is the hint a statement about tenant's rows runs under.
func tenantHint(ctx context.Context, tenant int64) context.Context {
	return shardconf.WithHint(ctx, "t_hint", shardconf.Hint{Database: []any{tenant}, Table: []any{tenant}})
}

// tenantsHint hints several tenants at once: the statement reaches every
// combination of their data sources and tables.
func tenantsHint(ctx context.Context, tenants []int64) context.Context {
	vs := make([]any, len(tenants))
	for i, t := range tenants {
		vs[i] = t
	}
	return shardconf.WithHint(ctx, "t_hint", shardconf.Hint{Database: vs, Table: vs})
}

// splitAlgorithm routes k below props.split to the first target, the
// rest to the second (data sources).
type splitAlgorithm struct{ split *big.Int }

func newSplitAlgorithm(props map[string]string) (shardconf.ShardingAlgorithm, error) {
	n, err := strconv.ParseInt(props["split"], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("split: %v", err)
	}
	return splitAlgorithm{big.NewInt(n)}, nil
}

func (a splitAlgorithm) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	k, err := bigOf(v.Value)
	if err != nil {
		return "", err
	}
	if k.Cmp(a.split) < 0 {
		return targets[0], nil
	}
	return targets[1], nil
}

func (a splitAlgorithm) DoRangeSharding(targets []string, v shardconf.RangeShardingValue) ([]string, error) {
	lo, hi, err := inclusive(v.Range)
	if err != nil || (lo != nil && hi != nil && lo.Cmp(hi) > 0) {
		return nil, err
	}
	var out []string
	if lo == nil || lo.Cmp(a.split) < 0 {
		out = append(out, targets[0])
	}
	if hi == nil || hi.Cmp(a.split) >= 0 {
		out = append(out, targets[1])
	}
	return out, nil
}

// decadeAlgorithm routes k to table floor(k/10) mod 2.
type decadeAlgorithm struct{}

func decade(k *big.Int) *big.Int {
	q := new(big.Int)
	q.Div(k, big.NewInt(10)) // Euclidean: floor for a positive divisor
	return q
}

func (decadeAlgorithm) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	k, err := bigOf(v.Value)
	if err != nil {
		return "", err
	}
	return targets[new(big.Int).Mod(decade(k), big.NewInt(2)).Int64()], nil
}

func (decadeAlgorithm) DoRangeSharding(targets []string, v shardconf.RangeShardingValue) ([]string, error) {
	lo, hi, err := inclusive(v.Range)
	if err != nil || (lo != nil && hi != nil && lo.Cmp(hi) > 0) {
		return nil, err
	}
	if lo == nil || hi == nil || decade(lo).Cmp(decade(hi)) != 0 {
		return targets, nil
	}
	return []string{targets[new(big.Int).Mod(decade(lo), big.NewInt(2)).Int64()]}, nil
}

// bigOf reads a normalised sharding value as an integer (text too: the
// column is numeric).
func bigOf(v any) (*big.Int, error) {
	switch x := v.(type) {
	case int64:
		return big.NewInt(x), nil
	case uint64:
		return new(big.Int).SetUint64(x), nil
	case string:
		if k, ok := new(big.Int).SetString(x, 10); ok {
			return k, nil
		}
	}
	return nil, fmt.Errorf("k = %v (%T) is not an integer", v, v)
}

// inclusive turns a range into inclusive integer ends, nil where open.
func inclusive(r shardconf.Range) (lo, hi *big.Int, err error) {
	if !r.Lower.Unbounded() {
		if lo, err = bigOf(r.Lower.Value); err != nil {
			return nil, nil, err
		}
		if !r.Lower.Inclusive {
			lo.Add(lo, big.NewInt(1))
		}
	}
	if !r.Upper.Unbounded() {
		if hi, err = bigOf(r.Upper.Value); err != nil {
			return nil, nil, err
		}
		if !r.Upper.Inclusive {
			hi.Sub(hi, big.NewInt(1))
		}
	}
	return lo, hi, nil
}
