package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.grpc.v1.Device;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import dev.nodelet.dra.grpc.v1.Pool;
import org.junit.jupiter.api.Test;

class SnapshotDecoderTest {

  private static ListAndWatchResourcesResponse capacity(String value) {
    return ListAndWatchResourcesResponse.newBuilder().addPools(Pool.newBuilder().setName("pool")
        .addDevices(Device.newBuilder().setName("dev-0").putCapacity("memory", value))).build();
  }

  @Test
  void aCapacityMustBeAQuantity() {
    assertThat(SnapshotDecoder.decode(capacity("1.5Gi")).get(0).devices().get(0).getCapacity().get("memory")
        .getValue().toString()).isEqualTo("1.5Gi");
    assertThatThrownBy(() -> SnapshotDecoder.decode(capacity("12x")))
        .hasMessage("device \"dev-0\" of pool \"pool\": capacity \"memory\" is not a quantity: \"12x\"");
  }

  @Test
  void aPoolNeedsAName() {
    assertThatThrownBy(() -> SnapshotDecoder.decode(ListAndWatchResourcesResponse.newBuilder()
        .addPools(Pool.getDefaultInstance()).build())).hasMessage("pool #0 has no name");
  }

  @Test
  void noPoolsIsAnEmptySnapshot() {
    assertThat(SnapshotDecoder.decode(ListAndWatchResourcesResponse.getDefaultInstance())).isEmpty();
  }
}
