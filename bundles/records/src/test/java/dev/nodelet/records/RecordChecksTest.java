package dev.nodelet.records;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RecordChecksTest {

  record Pod(String namespace, String name, String uid, String note) {
    Pod {
      RecordChecks.requireNonNull(Pod.class, namespace, name, uid);
    }
  }

  @Test
  void namesTheRecordAndTheFirstNullComponent() {
    assertThatThrownBy(() -> new Pod("default", null, null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("Pod.name must not be null");
    assertThatThrownBy(() -> new Pod("default", "web", null, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("Pod.uid must not be null");
  }

  @Test
  void componentsAfterTheCheckedOnesMayBeNull() {
    assertThatCode(() -> new Pod("default", "web", "u-1", null)).doesNotThrowAnyException();
  }

  @Test
  void refusesMoreValuesThanComponents() {
    assertThatThrownBy(() -> RecordChecks.requireNonNull(Pod.class, "a", "b", "c", "d", "e"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has 4 components, 5 values were given");
  }
}
