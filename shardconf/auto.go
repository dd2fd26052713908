package shardconf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// autoCount is the number of physical tables an autoTables strategy
// creates: ShardingSphere derives it from the auto algorithm's props.
func (c *compiler) autoCount(s *Strategy) (int, error) {
	a, ok := c.cfg.Algorithms[s.Algorithm]
	if !ok {
		return 0, c.cfg.errAt(s.Pos, "sharding algorithm %q is not in shardingAlgorithms", s.Algorithm)
	}
	n, err := autoTableCount(a.Type, a.Props)
	if err != nil {
		return 0, &ConfigError{File: c.cfg.File, Line: a.Pos.Line, Column: a.Pos.Column, Path: a.Pos.Path,
			Msg: fmt.Sprintf("algorithm %s (%s): %v", a.Name, a.Type, err), Err: err}
	}
	if n < 1 || n > 1_000_000 {
		return 0, c.cfg.errAt(a.Pos, "algorithm %s (%s) gives %d tables; want 1..1000000", a.Name, a.Type, n)
	}
	return n, nil
}

// autoTableCount computes the table count of an auto algorithm.
func autoTableCount(typ string, props map[string]string) (int, error) {
	switch typ {
	case "MOD", "HASH_MOD", "SNOWFLAKE_BITS":
		n, err := autoNum(props, "sharding-count")
		return int(n), err
	case "BOUNDARY_RANGE":
		r := splitList(props["sharding-ranges"])
		if len(r) == 0 {
			return 0, &propError{key: "sharding-ranges", reason: "required"}
		}
		return len(r) + 1, nil
	case "VOLUME_RANGE":
		return volumeRangeCount(props)
	case "AUTO_INTERVAL":
		return autoIntervalCount(props)
	}
	return 0, fmt.Errorf("%s is not an auto sharding algorithm", typ)
}

// autoNum reads required integer prop key.
func autoNum(props map[string]string, key string) (int64, error) {
	v, ok := props[key]
	if !ok {
		return 0, &propError{key: key, reason: "required"}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, &propError{key: key, value: v, reason: "not an integer"}
	}
	return n, nil
}

// volumeRangeCount is VOLUME_RANGE's table count: the partitions of the
// range and a table below and above it.
func volumeRangeCount(props map[string]string) (int, error) {
	lo, err1 := autoNum(props, "range-lower")
	hi, err2 := autoNum(props, "range-upper")
	vol, err3 := autoNum(props, "sharding-volume")
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return 0, err
		}
	}
	if vol <= 0 || hi <= lo {
		return 0, fmt.Errorf("want range-lower < range-upper and sharding-volume > 0")
	}
	// ceil((hi - lo) / vol) + 2 as newVolumeRangeAlgorithm counts, in
	// uint64: hi - lo + vol - 1 overflows int64 for wide ranges.
	w := uint64(hi) - uint64(lo)
	n := w / uint64(vol)
	if w%uint64(vol) != 0 {
		n++
	}
	if n > 1_000_000 {
		return 0, fmt.Errorf("%d partitions; want at most 1000000", n)
	}
	return int(n) + 2, nil
}

// autoIntervalCount is AUTO_INTERVAL's table count. ShardingSphere parses
// the first 19 characters, divides the span by sharding-seconds
// truncating, and adds a table below and above.
func autoIntervalCount(props map[string]string) (int, error) {
	const layout = "2006-01-02 15:04:05"
	parse := func(key string) (time.Time, error) {
		v := strings.TrimSpace(props[key])
		if len(v) > len(layout) {
			v = v[:len(layout)]
		}
		t, err := time.Parse(layout, v)
		if err != nil {
			return t, &propError{key: key, value: props[key], reason: "want yyyy-MM-dd HH:mm:ss"}
		}
		return t, nil
	}
	lo, err := parse("datetime-lower")
	if err != nil {
		return 0, err
	}
	hi, err := parse("datetime-upper")
	if err != nil {
		return 0, err
	}
	secs, err := autoNum(props, "sharding-seconds")
	if err != nil {
		return 0, err
	}
	if secs <= 0 || hi.Before(lo) {
		return 0, fmt.Errorf("want datetime-lower <= datetime-upper and sharding-seconds > 0")
	}
	// Unix seconds, not hi.Sub(lo): a Duration saturates past 292 years,
	// and the count must be the algorithm's own (newAutoIntervalAlgorithm).
	return int((hi.Unix()-lo.Unix())/secs) + 2, nil
}
