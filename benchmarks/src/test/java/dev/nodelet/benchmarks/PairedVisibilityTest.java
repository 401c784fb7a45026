package dev.nodelet.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class PairedVisibilityTest {

  private final Map<String, ConfigMap> first = new ConcurrentHashMap<>();
  private final Map<String, ConfigMap> second = new ConcurrentHashMap<>();
  private final Histogram firstLatencies = new Histogram(60_000_000_000L, 3);
  private final Histogram secondLatencies = new Histogram(60_000_000_000L, 3);
  private final AtomicLong now = new AtomicLong(1_000_000);

  private static ConfigMap version(String name, long resourceVersion) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).withResourceVersion(Long.toString(resourceVersion))
        .endMetadata().build();
  }

  @Test
  void timesEachCacheOnTheSameUpdateUntilItShowsThatVersionOrANewerOne() {
    PairedVisibility checker = new PairedVisibility(first::get, second::get, 0, firstLatencies, secondLatencies);
    first.put("cm-1", version("cm-1", 10));
    second.put("cm-1", version("cm-1", 10));
    checker.sent(new PairedVisibility.Update(0, "cm-1", 11, 1_000_000));

    now.set(1_200_000);
    first.put("cm-1", version("cm-1", 11));
    assertThat(checker.pass(now::get)).as("the second cache has not shown it").isTrue();
    now.set(1_700_000);
    second.put("cm-1", version("cm-1", 12)); // a newer version shows the update too
    assertThat(checker.pass(now::get)).isFalse();

    assertThat(firstLatencies.getTotalCount()).isEqualTo(1);
    assertThat(firstLatencies.getMaxValue()).isBetween(199_000L, 201_000L);
    assertThat(secondLatencies.getTotalCount()).isEqualTo(1);
    assertThat(secondLatencies.getMaxValue()).isBetween(699_000L, 701_000L);
  }

  @Test
  void doesNotRecordTheWarmUpButStillWaitsForIt() {
    PairedVisibility checker = new PairedVisibility(first::get, second::get, 2, firstLatencies, secondLatencies);
    for (int i = 0; i < 3; i++) {
      checker.sent(new PairedVisibility.Update(i, "cm-" + i, 5, 1_000_000));
    }
    assertThat(checker.pass(now::get)).isTrue();
    for (int i = 0; i < 3; i++) {
      first.put("cm-" + i, version("cm-" + i, 5));
      second.put("cm-" + i, version("cm-" + i, 5));
    }
    now.set(3_000_000);
    assertThat(checker.pass(now::get)).isFalse();

    assertThat(firstLatencies.getTotalCount()).isEqualTo(1);
    assertThat(secondLatencies.getTotalCount()).isEqualTo(1);
  }

  @Test
  void alternatesWhichCacheIsReadFirst() {
    List<String> reads = new ArrayList<>();
    PairedVisibility checker = new PairedVisibility(name -> {
      reads.add("first");
      return null;
    }, name -> {
      reads.add("second");
      return null;
    }, 0, firstLatencies, secondLatencies);
    checker.sent(new PairedVisibility.Update(0, "cm-0", 1, 0));

    checker.pass(now::get);
    checker.pass(now::get);

    assertThat(reads).containsExactly("second", "first", "first", "second");
  }
}
