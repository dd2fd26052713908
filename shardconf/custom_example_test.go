package shardconf_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/shardconf"
)

// regionAlgorithm routes a country code to the table of its region. Its
// props map each region to its countries: {eu: "de,fr", us: "us,ca"}.
type regionAlgorithm struct {
	region map[string]string // country -> region
}

func newRegionAlgorithm(props map[string]string) (shardconf.ShardingAlgorithm, error) {
	a := &regionAlgorithm{region: map[string]string{}}
	for region, countries := range props {
		if region == "strategy" || region == "algorithmClassName" { // CLASS_BASED's own props
			continue
		}
		for _, c := range strings.Split(countries, ",") {
			a.region[strings.TrimSpace(c)] = region
		}
	}
	if len(a.region) == 0 {
		return nil, errors.New("no regions in props") // a load error with file and line
	}
	return a, nil
}

// DoSharding returns one of targets, or an error: never a guess.
func (a *regionAlgorithm) DoSharding(targets []string, v shardconf.ShardingValue) (string, error) {
	code, ok := v.Value.(string)
	if !ok {
		return "", fmt.Errorf("country code %v is not text", v.Value)
	}
	region, ok := a.region[code]
	if !ok {
		return "", fmt.Errorf("%w: country %q is in no region", shardconf.ErrNoRoute, code)
	}
	return v.Table + "_" + region, nil
}

func init() {
	// Register at start-up, before loading rule files that name it. The
	// Java fleet's class name lets its CLASS_BASED rule file load unchanged.
	if err := shardconf.RegisterAlgorithm("com.example.RegionShardingAlgorithm", newRegionAlgorithm); err != nil {
		panic(err)
	}
}

func ExampleRegisterAlgorithm() {
	cfg, err := shardconf.Parse([]byte(`
rules:
- !SHARDING
  tables:
    t_user:
      actualDataNodes: ds_0.t_user_eu, ds_0.t_user_us
      tableStrategy: {standard: {shardingColumn: country, shardingAlgorithmName: by_region}}
  shardingAlgorithms:
    by_region:
      type: CLASS_BASED    # a Go-only file may say type: com.example.RegionShardingAlgorithm
      props:
        strategy: STANDARD
        algorithmClassName: com.example.RegionShardingAlgorithm
        eu: de,fr
        us: us,ca
`))
	if err != nil {
		panic(err)
	}
	r, err := shardconf.NewRouter(cfg)
	if err != nil {
		panic(err)
	}
	ts, err := r.Route("t_user", shardconf.Eq("country", "fr"))
	fmt.Println(ts, err)
	_, err = r.Route("t_user", shardconf.Eq("country", "jp"))
	fmt.Println("jp:", errors.Is(err, shardconf.ErrNoRoute))
	_, err = r.Route("t_user", shardconf.Between("country", "a", "m"))
	fmt.Println("range:", errors.Is(err, shardconf.ErrRangeNotSupported))
	// Output:
	// [ds_0.t_user_eu] <nil>
	// jp: true
	// range: true
}
