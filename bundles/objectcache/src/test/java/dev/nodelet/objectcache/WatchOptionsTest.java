package dev.nodelet.objectcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WatchOptionsTest {

  private static final ConfigMap OBJECT = new ConfigMapBuilder().withNewMetadata().withNamespace("ns")
      .withName("a").withLabels(Map.of("app", "x")).endMetadata().withData(Map.of("k", "v")).build();

  @Test
  void anObjectMatchesWhenItHasTheLabelsAndFieldsAndPassesThePredicate() {
    WatchOptions.Builder<ConfigMap> builder = WatchOptions.<ConfigMap>builder().label("app", "x")
        .field(WatchOptions.FIELD_NAMESPACE, "ns").field(WatchOptions.FIELD_NAME, "a");

    assertThat(builder.build().matches(OBJECT)).isTrue();
    assertThat(builder.predicate(c -> c.getData().containsKey("other")).build().matches(OBJECT)).isFalse();
    assertThat(WatchOptions.<ConfigMap>builder().label("app", "y").build().matches(OBJECT)).isFalse();
    assertThat(WatchOptions.<ConfigMap>builder().field(WatchOptions.FIELD_NAME, "b").build().matches(OBJECT))
        .isFalse();
  }

  @Test
  void defaultsWatchEverythingFromNowWithoutBookmarks() {
    WatchOptions<ConfigMap> options = WatchOptions.<ConfigMap>builder().resourceVersion("").build();

    assertThat(options.resourceVersion()).isEmpty();
    assertThat(options.sendInitialEvents()).isFalse();
    assertThat(options.allowBookmarks()).isFalse();
    assertThat(options.deadline()).isEmpty();
    assertThat(options.bufferSize()).isZero();
    assertThat(options.matches(OBJECT)).isTrue();
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> WatchOptions.builder().field("spec.nodeName", "n"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unsupported field selector: spec.nodeName");
    assertThatThrownBy(() -> WatchOptions.builder().bufferSize(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("bufferSize must not be negative: -1");
  }
}
