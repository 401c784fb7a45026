package dev.nodelet.health.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The JSON of one object's receipt, as {@code /receipts} lists it. */
class ReceiptsJsonTest {

  private static ObjectReceipt receipt(Optional<ObjectState> state, Optional<String> staleReason) {
    return new ObjectReceipt("configmaps", "ns", "settings", Optional.of("uid-1"), Optional.of("7"),
        Optional.of(Instant.parse("2026-11-25T16:25:21Z")), Optional.empty(), "watch", staleReason, state);
  }

  @Test
  void everyFieldOfTheReceiptIsListedWithTheStoresState() {
    JsonNode fromDisk = ReceiptsJson.object(receipt(Optional.of(ObjectState.FROM_DISK),
        Optional.of("served from the copy a previous run stored on disk")));
    assertThat(fromDisk.get("state").asText()).isEqualTo("FROM_DISK");
    assertThat(fromDisk.get("uid").asText()).isEqualTo("uid-1");
    assertThat(fromDisk.get("resourceVersion").asText()).isEqualTo("7");
    assertThat(fromDisk.get("lastChanged").asText()).isEqualTo("2026-11-25T16:25:21Z");
    assertThat(fromDisk.get("seen").isNull()).isTrue();
    assertThat(fromDisk.get("strategy").asText()).isEqualTo("watch");
    assertThat(fromDisk.get("stale").asBoolean()).isTrue();
    assertThat(fromDisk.get("staleReason").asText()).startsWith("served from the copy");
    assertThat(fromDisk.get("refreshedOnNextGet").asBoolean()).isFalse();

    JsonNode idle = ReceiptsJson.object(receipt(Optional.of(ObjectState.IDLE), Optional.empty()));
    assertThat(idle.get("state").asText()).isEqualTo("IDLE");
    assertThat(idle.get("stale").asBoolean()).isFalse();

    JsonNode expired = ReceiptsJson.object(new ObjectReceipt("configmaps", "ns", "settings", Optional.of("uid-1"),
        Optional.of("7"), Optional.empty(), Optional.empty(), "ttl",
        Optional.of("its TTL expired; the next get fetches it again"), Optional.empty(), true));
    assertThat(expired.get("stale").asBoolean()).isTrue();
    assertThat(expired.get("refreshedOnNextGet").asBoolean()).isTrue();
  }

  @Test
  void aStoreThatTellsNoStateGivesNull() {
    JsonNode untold = ReceiptsJson.object(receipt(Optional.empty(), Optional.empty()));
    assertThat(untold.has("state")).isTrue();
    assertThat(untold.get("state").isNull()).isTrue();
  }
}
