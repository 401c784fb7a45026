package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.grpc.v1.CounterConsumption;
import dev.nodelet.dra.grpc.v1.CounterSet;
import dev.nodelet.dra.grpc.v1.Device;
import dev.nodelet.dra.grpc.v1.DeviceTaint;
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

  @Test
  void sharedCountersConsumptionsTaintsAndBindingConditionsAreDecoded() {
    var pools = SnapshotDecoder.decode(ListAndWatchResourcesResponse.newBuilder().addPools(Pool.newBuilder()
        .setName("pool")
        .addSharedCounters(CounterSet.newBuilder().setName("gpu-0").putCounters("memory", "80Gi"))
        .addDevices(Device.newBuilder().setName("part-0")
            .addConsumesCounters(CounterConsumption.newBuilder().setCounterSet("gpu-0").putCounters("memory", "10Gi"))
            .addTaints(DeviceTaint.newBuilder().setKey("broken").setEffect("NoSchedule"))
            .addBindingConditions("example.com/attached").addBindingFailureConditions("example.com/failed")
            .setBindsToNode(true))).build());
    var pool = pools.get(0);
    assertThat(pool.sharedCounters()).singleElement().satisfies(set -> {
      assertThat(set.getName()).isEqualTo("gpu-0");
      assertThat(set.getCounters().get("memory").getValue().toString()).isEqualTo("80Gi");
    });
    var device = pool.devices().get(0);
    assertThat(device.getConsumesCounters()).singleElement().satisfies(c -> {
      assertThat(c.getCounterSet()).isEqualTo("gpu-0");
      assertThat(c.getCounters().get("memory").getValue().toString()).isEqualTo("10Gi");
    });
    assertThat(device.getTaints()).singleElement().satisfies(t -> {
      assertThat(t.getKey()).isEqualTo("broken");
      assertThat(t.getValue()).isNull();
      assertThat(t.getEffect()).isEqualTo("NoSchedule");
      assertThat(t.getTimeAdded()).isNull();
    });
    assertThat(device.getBindingConditions()).containsExactly("example.com/attached");
    assertThat(device.getBindingFailureConditions()).containsExactly("example.com/failed");
    assertThat(device.getBindsToNode()).isTrue();
    assertThat(Device.newBuilder().setName("d").build().hasBindsToNode()).isFalse();
    assertThatThrownBy(() -> SnapshotDecoder.decode(ListAndWatchResourcesResponse.newBuilder().addPools(Pool
        .newBuilder().setName("pool").addSharedCounters(CounterSet.newBuilder().setName("c")
            .putCounters("memory", "lots")))
        .build())).hasMessage("counter set \"c\" of pool \"pool\": counter \"memory\" is not a quantity: \"lots\"");
  }
}
