package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Settings are small values the daemon keeps about its own configuration
// beside the layout version, in the meta bucket, sealed as every value is.
// Only what the daemon needs to tell a change of configuration between two
// runs, and what it still owes to one, is kept there: never a user's text
// (a hash of it), at most session keys the records name anyway.

// SettingExcludeKey is the key of the privacy.exclude patterns the records
// were last made to agree with (daemon: a start with other patterns
// applies them to what is kept).
const SettingExcludeKey = "excludeKey"

// SettingExcludePending lists, one per line, the keys of sessions that
// privacy.exclude covers and that could not all be forgotten yet (a map
// that could not be removed, a commit that failed), each followed, when
// the session stays and only some of its sources are to go, by a tab and
// their ids (decimal, space-separated): the next start forgets them
// whatever their logs say then (they may be gone).
const SettingExcludePending = "excludePending"

// SettingSalt is a random value of this database, which the daemon hashes
// with what it keeps of a configuration (SettingExcludeKey).
const SettingSalt = "salt"

// SettingLastRepair is the last repair of this database a process made
// (daemon.StateRepair as JSON: when, what was wrong with the file or how
// many records were dropped, where a damaged file was moved, by a scan
// or the daemon), so that a status after that process is gone still
// tells it.
const SettingLastRepair = "lastRepair"

// SettingMapIdentity is the identity of the map options (builder version,
// path mode, hash key, event cap, prices: builder.Options.Identity, a
// hash) every map was last written with: a daemon with options of another
// identity writes every map again.
const SettingMapIdentity = "mapIdentity"

// Setting returns a setting, "" when it was never put.
func (d *DB) Setting(name string) (string, error) {
	var v string
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(name))
		if raw == nil {
			return nil
		}
		payload, err := unseal(bucketMeta, []byte(name), raw)
		if err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
		v = string(payload)
		return nil
	})
	return v, err
}

// PutSetting puts a setting; "" removes it.
func (d *DB) PutSetting(name, value string) error {
	if err := d.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if value == "" {
			return b.Delete([]byte(name))
		}
		return b.Put([]byte(name), seal(bucketMeta, []byte(name), []byte(value)))
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}
