package observe

import (
	"errors"

	"github.com/shardkey/shardkey/shardconf"
)

// RouteReason classifies a routing error of package shardconf, for
// emitters that have first matched their own sentinels; ReasonOther when
// err matches none.
func RouteReason(err error) Reason {
	switch {
	case errors.Is(err, shardconf.ErrMissingShardingKey):
		return ReasonMissingShardingKey
	case errors.Is(err, shardconf.ErrShardingKeyChange):
		return ReasonShardingKeyChange
	case errors.Is(err, shardconf.ErrUnusedHint):
		return ReasonHint
	case errors.Is(err, shardconf.ErrUnknownTable):
		return ReasonUnknownTable
	case errors.Is(err, shardconf.ErrNoRoute):
		return ReasonNoRoute
	}
	return ReasonOther
}
