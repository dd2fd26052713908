// Command shardkey generates and inspects distributed primary keys with
// package keygen, and works with ShardingSphere-style sharding rules with
// package shardconf:
//
//	gen       generate keys
//	decode    split IDs into time, worker and sequence
//	validate  check a sharding rule file
//	route     show where a statement on a table goes
//	targets   list every physical table of the rules
//	ddl       print CREATE TABLE statements for every physical table, per
//	          data source and SQL dialect, from a template for the logic table
//	workers   show worker ids held in a database, ZooKeeper, etcd or Redis; free SQL lease slots
//	audit     find rows already in the wrong table or data source, rows
//	          without sharding values, and keys in several shards
//	xa        list or settle two-phase commit branches left prepared
//
// Every command takes -h (usage and examples) and -o text|json; commands
// that read rules take the file as -rules FILE or their first argument.
//
// Each subcommand lives in its own file and registers itself in commands;
// run dispatches to it with its own flag.FlagSet. run takes the arguments
// and output streams explicitly, so tests call it in-process.
//
// Exit codes: 0 success (and explicit help), 1 runtime error (bad props,
// generator error, undecodable ID, invalid rules or template, unreachable
// database), 2 usage error (unknown command, bad flag, missing argument,
// -n out of range). audit, like diff, says whether it found something: 0
// clean, 1 findings, 2 any error that kept it from checking.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// command is one subcommand.
type command struct {
	name     string
	synopsis string // arguments after "shardkey <name>", for usage lines
	summary  string // one line, for `shardkey help`
	details  string // description, printed before the flags
	examples string // printed after the flags
	// setup defines the command's flags on fs and returns the action that
	// runs once they are parsed.
	setup func(fs *flag.FlagSet) action
}

// action runs a command with its positional arguments. An error made with
// usageErrorf exits 2; any other error exits 1.
type action func(args []string, stdout io.Writer) error

// commands are the subcommands, in the order `shardkey help` lists them.
var commands = []*command{genCmd, decodeCmd, validateCmd, routeCmd, targetsCmd, ddlCmd, workersCmd, auditCmd, xaCmd}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printMainUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return runHelp(args[1:], stdout, stderr)
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "shardkey: unknown command %q\nRun 'shardkey help' for usage.\n", args[0])
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		printMainUsage(stdout)
		return exitOK
	case 1:
		if args[0] == "help" {
			printMainUsage(stdout)
			return exitOK
		}
		if c := lookup(args[0]); c != nil {
			c.printUsage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "shardkey help: unknown command %q\nRun 'shardkey help' for usage.\n", args[0])
	default:
		fmt.Fprintln(stderr, "usage: shardkey help [command]")
	}
	return exitUsage
}

func printMainUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("shardkey generates and inspects distributed primary keys and sharding rules.\n\n")
	b.WriteString("usage: shardkey <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString("  help     show help for a command\n\n")
	b.WriteString("Run 'shardkey help <command>' or 'shardkey <command> -h' for a command's flags and examples.\n\n")
	b.WriteString("Examples:\n")
	b.WriteString("  shardkey gen -props worker-id=1 -n 10\n")
	b.WriteString("  shardkey gen -type UUID -props version=7 -n 3 -o json\n")
	b.WriteString("  shardkey decode 1331042935696789505\n")
	b.WriteString("  shardkey decode -type UID -o json 1424217030869204992\n")
	b.WriteString("  shardkey validate rules.yaml\n")
	b.WriteString("  shardkey route rules.yaml t_order order_id=123 user_id=7\n")
	b.WriteString("  shardkey targets rules.yaml\n")
	b.WriteString("  shardkey ddl -rules rules.yaml -table t_order -template t_order.sql\n")
	b.WriteString("  shardkey workers list -dsn postgres://app@127.0.0.1:5432/app\n")
	b.WriteString("  shardkey workers list -backend zookeeper -servers 127.0.0.1:2181 -name leaf-app\n")
	b.WriteString("  shardkey audit rules.yaml t_order\n")
	b.WriteString("  shardkey xa list rules.yaml\n")
	b.WriteString("\nExit status: 0 success, 1 runtime error, 2 usage error.\n")
	io.WriteString(w, b.String())
}

// flagSet builds the command's flag set. Output is discarded: run prints
// errors and usage itself, so -h goes to stdout and mistakes to stderr.
func (c *command) flagSet() (*flag.FlagSet, action) {
	fs := flag.NewFlagSet("shardkey "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs, c.setup(fs)
}

func (c *command) printUsage(w io.Writer) {
	fs, _ := c.flagSet()
	var flags bytes.Buffer
	fs.SetOutput(&flags)
	fs.PrintDefaults()
	fmt.Fprintf(w, "usage: shardkey %s %s\n\n%s\nFlags:\n%s\nExamples:\n%s", c.name, c.synopsis,
		c.details, flags.String(), c.examples)
}

func (c *command) run(args []string, stdout, stderr io.Writer) int {
	fs, act := c.flagSet()
	rest, err := parseFlags(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.printUsage(stdout)
		return exitOK
	case err != nil:
		return c.usageFailure(stderr, err)
	}
	err = act(rest, stdout)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return c.usageFailure(stderr, err)
	case errors.Is(err, errSilent):
		return exitRuntime
	default:
		fmt.Fprintf(stderr, "shardkey: %v\n", err)
		return exitRuntime
	}
}

func (c *command) usageFailure(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "shardkey %s: %v\nusage: shardkey %s %s\nRun 'shardkey %s -h' for help.\n",
		c.name, err, c.name, c.synopsis, c.name)
	return exitUsage
}

// parseFlags parses flags anywhere among the arguments, so that
// `shardkey decode 123 -type UID` works, and returns the positional
// arguments. Arguments after "--" are all positional.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	rest := []string{}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if consumed := len(args) - len(left); consumed > 0 && args[consumed-1] == "--" {
			return append(rest, left...), nil
		}
		if len(left) == 0 {
			return rest, nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// usageError is a mistake in how the command was invoked; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}
