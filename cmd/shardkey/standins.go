package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/shardkey/shardkey/shardconf"
)

// errStandIn is what a stand-in Go algorithm answers if anything routes
// through it; validate never routes, and route never registers stand-ins.
var errStandIn = errors.New("stand-in for a Go algorithm the service registers: the shardkey command cannot route with it")

// stoodIn records the names this process registered stand-ins under:
// registration is process-wide and cannot be undone, so a second validate
// in one process (tests) reuses them. Guarded by stoodInMu.
var (
	stoodInMu sync.Mutex
	stoodIn   = map[string]bool{}
)

type standInAlgorithm struct{}

func (standInAlgorithm) DoSharding([]string, shardconf.ShardingValue) (string, error) {
	return "", errStandIn
}

type standInComplex struct{}

func (standInComplex) DoSharding([]string, []shardconf.ShardingValue) (string, error) {
	return "", errStandIn
}

// registerStandIns registers, for validate, a stand-in under every Go
// algorithm name the rules need but this binary cannot have: the class of
// each CLASS_BASED algorithm, and the types listed in goTypes (-go-algorithms).
// A service registers the real ones with shardconf.RegisterAlgorithm; the
// rest of the file is still checked. It returns one warning per algorithm.
// Plain types are stood in only when named in goTypes, so a misspelled
// built-in type stays an error.
func registerStandIns(cfg *shardconf.Config, goTypes []string) ([]string, error) {
	complexAlgos := complexAlgorithmNames(cfg)
	var warnings []string
	for _, a := range sortedAlgorithms(cfg) {
		name, isComplex := "", complexAlgos[a.Name]
		switch {
		case a.Type == "CLASS_BASED":
			name = strings.TrimSpace(a.Props["algorithmClassName"])
			isComplex = strings.EqualFold(strings.TrimSpace(a.Props["strategy"]), "COMPLEX")
		case slices.ContainsFunc(goTypes, func(t string) bool { return strings.EqualFold(t, a.Type) }):
			name = a.Type
		}
		if name == "" {
			continue
		}
		if err := registerStandIn(name, isComplex); err != nil {
			return nil, err
		}
		loc := cfg.File
		if a.Pos.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d: %s", cfg.File, a.Pos.Line, a.Pos.Column, a.Pos.Path)
		}
		warnings = append(warnings, fmt.Sprintf("%s: algorithm %s needs the Go algorithm %q: the service must register it "+
			"(shardconf.RegisterAlgorithm or RegisterComplexAlgorithm) before NewRouter; its props were not checked", loc, a.Name, name))
	}
	return warnings, nil
}

// registerStandIn registers one stand-in unless this process already did.
// A name taken otherwise (a built-in type) is an error.
func registerStandIn(name string, isComplex bool) error {
	stoodInMu.Lock()
	defer stoodInMu.Unlock()
	key := strings.ToUpper(name)
	if stoodIn[key] {
		return nil
	}
	var err error
	if isComplex {
		err = shardconf.RegisterComplexAlgorithm(name, func(map[string]string) (shardconf.ComplexShardingAlgorithm, error) {
			return standInComplex{}, nil
		})
	} else {
		err = shardconf.RegisterAlgorithm(name, func(map[string]string) (shardconf.ShardingAlgorithm, error) {
			return standInAlgorithm{}, nil
		})
	}
	if err != nil {
		return fmt.Errorf("-go-algorithms: %w", err)
	}
	stoodIn[key] = true
	return nil
}

// complexAlgorithmNames are the algorithms some complex strategy names.
func complexAlgorithmNames(cfg *shardconf.Config) map[string]bool {
	out := map[string]bool{}
	add := func(s *shardconf.Strategy) {
		if s != nil && s.Type == "complex" {
			out[s.Algorithm] = true
		}
	}
	add(cfg.DefaultDatabaseStrategy)
	add(cfg.DefaultTableStrategy)
	for _, t := range cfg.Tables {
		add(t.DatabaseStrategy)
		add(t.TableStrategy)
		add(t.AutoStrategy)
	}
	return out
}

func sortedAlgorithms(cfg *shardconf.Config) []*shardconf.Algorithm {
	out := make([]*shardconf.Algorithm, 0, len(cfg.Algorithms))
	for _, a := range cfg.Algorithms {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *shardconf.Algorithm) int { return strings.Compare(a.Name, b.Name) })
	return out
}
