package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shardkey/shardkey/keygen"
)

var decodeCmd = &command{
	name:     "decode",
	synopsis: "[-type T] [-props k=v,...] [-o text|json] ID...",
	summary:  "split IDs into time, worker and sequence",
	details: `Decode prints the fields of each Snowflake-family ID: the time it was
issued (RFC 3339, UTC), the raw timestamp, worker, sequence, and the
datacenter, backup and clock-back fields when the layout has them.

-type and -props must describe the layout the IDs were generated with
(epoch, time-bits, worker-bits, sequence-bits, time-unit, datacenter-bits,
clock-back-bits); worker-id is not needed, it is read from each ID.
An ID is decimal, or base62 with a b62: prefix.
`,
	examples: `  shardkey decode 1331042935696789505
  shardkey decode -o json 1331042935696789505 b62:1aKBpJ4sLDO
  shardkey decode -props epoch=2016-11-01T00:00:00+08:00 1331042935696789505
  shardkey decode -props datacenter-bits=3 1331042961849323521
  shardkey decode -type UID 1424217030869204992
  shardkey decode -type SNOWFLAKE_JS b62:$(shardkey gen -type SNOWFLAKE_JS -props worker-id=3 -format base62)
`,
	setup: func(fs *flag.FlagSet) action {
		g := addGeneratorFlags(fs)
		out := outputFlag(fs)
		return func(args []string, stdout io.Writer) error {
			if len(args) == 0 {
				return usageErrorf("missing ID argument")
			}
			return decode(stdout, g, out.value, args)
		}
	},
}

func decode(stdout io.Writer, gf generatorFlags, out string, args []string) error {
	props, err := gf.parse()
	if err != nil {
		return err
	}
	layout, err := keygen.LayoutFor(*gf.typ, props)
	if err != nil {
		return err
	}
	// Decode every ID before printing any, so a bad one prints nothing.
	parts := make([]keygen.Parts, len(args))
	for i, a := range args {
		id, err := parseIDArg(a)
		if err != nil {
			return err
		}
		if parts[i], err = layout.Decompose(id); err != nil {
			return err
		}
	}
	w := bufio.NewWriter(stdout)
	if out == "json" {
		objs := make([]partsJSON, len(parts))
		for i, p := range parts {
			objs[i] = newPartsJSON(layout, p)
		}
		if err := writeJSON(w, objs); err != nil {
			return err
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "layout: %s\n", layout)
	for _, p := range parts {
		w.WriteByte('\n')
		fields := partsFields(layout, p)
		width := 0
		for _, f := range fields {
			width = max(width, len(f[0])+1)
		}
		for _, f := range fields {
			fmt.Fprintf(w, "%-*s %s\n", width, f[0]+":", f[1])
		}
	}
	return w.Flush()
}

// parseIDArg parses a decimal ID, or a base62 one prefixed with "b62:".
func parseIDArg(s string) (int64, error) {
	if b62, ok := strings.CutPrefix(s, "b62:"); ok {
		id, err := keygen.ParseBase62(b62)
		return int64(id), err
	}
	id, err := keygen.ParseID(s)
	if err != nil {
		if errors.Is(err, keygen.ErrInvalidID) {
			return 0, fmt.Errorf("%w (base62 IDs need a b62: prefix)", err)
		}
		return 0, err
	}
	return int64(id), nil
}

// timeFormat is RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// partsFields lists an ID's fields as key/value pairs, most significant
// first, with the optional fields only when the layout has them.
func partsFields(l keygen.Layout, p keygen.Parts) [][2]string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	f := [][2]string{
		{"id", i(p.ID)},
		{"time", p.Time.UTC().Format(timeFormat)},
		{"timestamp", i(p.Timestamp)},
	}
	if l.DatacenterBits > 0 {
		f = append(f, [2]string{"datacenter", i(p.Datacenter)})
	}
	if l.BackupBits > 0 {
		f = append(f, [2]string{"backup", strconv.FormatBool(p.Backup)})
	}
	f = append(f, [2]string{"worker", i(p.Worker)})
	if l.ClockBackBits > 0 {
		f = append(f, [2]string{"clock-back", i(p.ClockBack)})
	}
	return append(f, [2]string{"sequence", i(p.Sequence)})
}

// partsJSON is one decoded ID in -o json output. Optional fields are
// omitted when the layout lacks them.
type partsJSON struct {
	ID         keygen.ID `json:"id"` // a quoted decimal string
	Time       string    `json:"time"`
	Timestamp  int64     `json:"timestamp"`
	Datacenter *int64    `json:"datacenter,omitempty"`
	Backup     *bool     `json:"backup,omitempty"`
	Worker     int64     `json:"worker"`
	ClockBack  *int64    `json:"clock_back,omitempty"`
	Sequence   int64     `json:"sequence"`
}

func newPartsJSON(l keygen.Layout, p keygen.Parts) partsJSON {
	j := partsJSON{
		ID:        keygen.ID(p.ID),
		Time:      p.Time.UTC().Format(timeFormat),
		Timestamp: p.Timestamp,
		Worker:    p.Worker,
		Sequence:  p.Sequence,
	}
	if l.DatacenterBits > 0 {
		j.Datacenter = &p.Datacenter
	}
	if l.BackupBits > 0 {
		j.Backup = &p.Backup
	}
	if l.ClockBackBits > 0 {
		j.ClockBack = &p.ClockBack
	}
	return j
}
