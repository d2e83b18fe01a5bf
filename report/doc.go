// Package report turns session maps into what a person reads: one
// self-contained HTML report (an overview of every session plus a page per
// session, see Write) and the token and cost tables of `agentmap usage`
// (see Usage), plus the compact event list of `agentmap show --events`
// (see WriteEvents).
//
// It reads maps only, the public agentplay/v1 format, never the agents'
// logs or the daemon's state database, so whatever it shows is what the
// maps hold and is as safe to share as they are.
//
// # Sources
//
// Where the maps come from is a Source:
//
//	type Source interface {
//		Maps(ctx context.Context, f Filter) iter.Seq2[*Map, error]
//	}
//
// Maps yields every decoded map that passes f, in any order, and stops
// when the consumer stops ranging or ctx is done. A map that cannot be
// read is yielded as a non-nil error (naming the file, never its content)
// and the iteration goes on; the consumer decides whether that is fatal.
// A source may push the filter down (a database source turns it into a
// WHERE clause) or apply it after decoding with Filter.Keep; either way
// every yielded map must pass Filter.Keep.
//
// The sources here are Dir (a map store or any directory of .json.gz and
// .json maps), Files (named files under a root, as the daemon's listing
// gives them) and Bundle (an agentmap bundle .tar.gz). A team database
// that keeps each whole map as jsonb plugs in as one more Source
// (`--from postgres://...`): it selects the map documents whose session
// matches the filter and decodes each with Decode.
package report
