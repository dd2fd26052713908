package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/shardkey/shardkey/keygen"
)

// choice is a string flag restricted to a fixed set of values; any other
// value is a flag error (exit 2).
type choice struct {
	value   string
	allowed []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	for _, a := range c.allowed {
		if strings.EqualFold(s, a) {
			c.value = a
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(c.allowed, ", "))
}

// choiceFlag defines a choice flag whose default is allowed[0].
func choiceFlag(fs *flag.FlagSet, name, usage string, allowed ...string) *choice {
	c := &choice{value: allowed[0], allowed: allowed}
	fs.Var(c, name, usage)
	return c
}

// outputFlag defines -o, the output form shared by every command.
func outputFlag(fs *flag.FlagSet) *choice {
	return choiceFlag(fs, "o", "output `form`: text or json", "text", "json")
}

// generatorFlags are -type and -props, which select a keygen generator.
type generatorFlags struct {
	typ   *string
	props *string
}

func addGeneratorFlags(fs *flag.FlagSet) generatorFlags {
	return generatorFlags{
		typ: fs.String("type", "SNOWFLAKE", "generator `type`, case-insensitive: "+strings.Join(keygen.Types(), ", ")),
		props: fs.String("props", "", "generator props as `k=v,k=v`, ShardingSphere keys "+
			"(worker-id, epoch, time-bits, worker-bits, sequence-bits, ...)"),
	}
}

// parse parses -props.
func (g generatorFlags) parse() (keygen.Props, error) {
	return keygen.ParseProps(*g.props)
}
