package opencode

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Only the headers of a patch name files: a hunk's context line that reads
// like one is the file's content.
func TestPatchFilesReadsHeadersOnly(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/app.js\n@@\n *** Add File: SECRET_LINE\n+*** Delete File: ALSO_CONTENT\n-*** Move to: NOR_THIS\n*** Add File: docs/new.md \r\n+hello\n*** End Patch"
	got := patchFiles(patch)
	want := []patchFile{{"src/app.js", "modify"}, {"docs/new.md", "create"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// A row holding a value of another type than its column's (SQLite keeps
// any value anywhere), or no id, is read as it can be: the store's other
// sessions are read, and no error quotes the row's value.
func TestRowsOfAnotherTypeAreReadAsTheyCanBe(t *testing.T) {
	ctx := context.Background()
	path := copyStore(t)
	before, err := ReadDB(ctx, path)
	if err != nil || len(before) == 0 {
		t.Fatalf("the store before: %d sessions, %v", len(before), err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`insert into session(id,project_id,slug,directory,title,version,time_created,time_updated) values('s-hostile','p','s','/x','t','v','SECRET_VALUE_1','SECRET_VALUE_2')`,
		`insert into session(id,project_id,slug,directory,title,version,time_created,time_updated) values(NULL,'p','s','/x','t','v',1,1)`,
		`insert into message(id,session_id,time_created,time_updated,data) values('m-hostile','s-hostile','SECRET_VALUE_3','SECRET_VALUE_4','{}')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Skipf("this store's schema takes no such row (%v)", err)
		}
	}
	db.Close()
	after, err := ReadDB(ctx, path)
	if err != nil {
		if strings.Contains(err.Error(), "SECRET_VALUE") {
			t.Fatalf("the error quotes a row's value: %v", err)
		}
		t.Fatalf("a hostile row failed the read of the store: %v", err)
	}
	if len(after) < len(before) {
		t.Errorf("%d sessions read after the hostile rows, %d before", len(after), len(before))
	}
	if got := fmt.Sprint(after); strings.Contains(got, "SECRET_VALUE") {
		t.Errorf("a row's value was read into the conversations")
	}
}
