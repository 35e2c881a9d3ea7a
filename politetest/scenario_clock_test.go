package politetest

import (
	"testing"
	"time"
)

// A Scenario with Now dates its articles in the hours before it, the newest
// in the last hour; without, from the fixed epoch, the same for a seed.
func TestScenarioNowDatesArticlesBeforeIt(t *testing.T) {
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	_, info := NewScenarioWeb(t, Scenario{Hosts: 2, ArticlesPerHost: 4, Seed: 3, Now: now})
	newest := time.Time{}
	for _, si := range info.Sites {
		for _, a := range si.Articles {
			if !a.Published.Before(now) || now.Sub(a.Published) > 5*time.Hour {
				t.Errorf("%s%s published %v, want within the 5 hours before %v", si.Name, a.Path, a.Published, now)
			}
			if a.Published.After(newest) {
				newest = a.Published
			}
		}
	}
	if now.Sub(newest) > time.Hour {
		t.Errorf("the newest article is %v old, want under an hour", now.Sub(newest))
	}
	_, fixed := NewScenarioWeb(t, Scenario{Hosts: 1, ArticlesPerHost: 1, Seed: 3})
	if p := fixed.Sites[0].Articles[0].Published; p.Year() != 2026 {
		t.Errorf("without Now, an article is published %v, want the fixed epoch's year", p)
	}
}
