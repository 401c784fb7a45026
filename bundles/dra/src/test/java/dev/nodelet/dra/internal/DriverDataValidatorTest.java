package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.Pool;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DriverDataValidatorTest {

  private static final String DRIVER = "gpu.example.com";

  private static Device device(String name) {
    return new DeviceBuilder().withName(name)
        .addToAttributes("model", new DeviceAttribute(null, null, "a100", null))
        .addToAttributes("gpu.example.com/driverVersion", new DeviceAttribute(null, null, null, "1.2.3-rc.1"))
        .addToCapacity("memory", new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity(null,
            new Quantity("80Gi")))
        .build();
  }

  private static void assertRejected(List<Pool> pools, String... fragments) {
    var thrown = assertThatThrownBy(() -> DriverDataValidator.validate(DRIVER, pools))
        .isInstanceOf(InvalidDriverDataException.class)
        .hasMessageStartingWith("driver \"gpu.example.com\" reported invalid resources: ");
    for (String fragment : fragments) {
      thrown.hasMessageContaining(fragment);
    }
  }

  @Test
  void acceptsValidData() {
    assertThatCode(() -> DriverDataValidator.validate(DRIVER,
        List.of(new Pool("node-1", List.of(device("gpu-0"), device("gpu-1"))), new Pool("node-1/numa.0", List.of()))))
        .doesNotThrowAnyException();
  }

  @Test
  void driverNamesAreDnsSubdomainsOfAtMost63Characters() {
    assertThatCode(() -> DriverDataValidator.validateDriverName("gpu.example.com")).doesNotThrowAnyException();
    assertThatThrownBy(() -> DriverDataValidator.validateDriverName("GPU.example.com"))
        .hasMessageContaining("driver name \"GPU.example.com\" is not a DNS subdomain");
    assertThatThrownBy(() -> DriverDataValidator.validateDriverName("a".repeat(64)))
        .hasMessageContaining("at most 63 characters");
    assertThatThrownBy(() -> DriverDataValidator.validateDriverName(null)).hasMessageContaining("no driver name");
  }

  @Test
  void deviceNamesAreDnsLabelsUniqueInTheirPool() {
    assertRejected(List.of(new Pool("p", List.of(device("GPU_0")))),
        "pool \"p\": device \"GPU_0\": the name must be a DNS label");
    assertRejected(List.of(new Pool("p", List.of(device("a".repeat(64))))), "must be a DNS label");
    assertRejected(List.of(new Pool("p", List.of(device("gpu-0"), device("gpu-0")))),
        "device \"gpu-0\": duplicate device name in the pool");
    assertThatCode(() -> DriverDataValidator.validate(DRIVER,
        List.of(new Pool("a", List.of(device("gpu-0"))), new Pool("b", List.of(device("gpu-0"))))))
        .as("the same name in two pools").doesNotThrowAnyException();
  }

  @Test
  void poolNamesAreUniqueSubdomainPaths() {
    assertRejected(List.of(new Pool("a", List.of()), new Pool("a", List.of())),
        "pool \"a\": more than one pool has this name");
    assertRejected(List.of(new Pool("a//b", List.of())), "pool \"a//b\": the name must be DNS subdomains");
    assertRejected(List.of(new Pool("", List.of())), "the name must be DNS subdomains");
  }

  @Test
  void atMost32AttributesAndCapacitiesPerDevice() {
    DeviceBuilder builder = new DeviceBuilder().withName("big");
    IntStream.range(0, 30).forEach(i -> builder.addToAttributes("a" + i, new DeviceAttribute(true, null, null,
        null)));
    IntStream.range(0, 3).forEach(i -> builder.addToCapacity("c" + i,
        new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity(null, new Quantity("1"))));
    assertRejected(List.of(new Pool("p", List.of(builder.build()))),
        "device \"big\": 33 attributes and capacities, at most 32 are allowed");
  }

  @Test
  void attributesHaveQualifiedNamesAndExactlyOneValidValue() {
    Device bad = new DeviceBuilder().withName("d")
        .addToAttributes("1bad", new DeviceAttribute(true, null, null, null))
        .addToAttributes("Bad.Domain/x", new DeviceAttribute(true, null, null, null))
        .addToAttributes("two", new DeviceAttribute(true, 1L, null, null))
        .addToAttributes("none", new DeviceAttribute())
        .addToAttributes("long", new DeviceAttribute(null, null, "x".repeat(65), null))
        .addToAttributes("ver", new DeviceAttribute(null, null, null, "1.2"))
        .build();
    assertRejected(List.of(new Pool("p", List.of(bad))),
        "attribute name \"1bad\" must be an identifier",
        "attribute name \"Bad.Domain/x\" must be an identifier",
        "attribute \"two\": exactly one of bool, int, string and version must be set, 2 are",
        "attribute \"none\": exactly one of bool, int, string and version must be set, 0 are",
        "attribute \"long\": the string is longer than 64 characters",
        "attribute \"ver\": the version must be a semantic version");
  }

  @Test
  void devicesBelongToThisNodeAndUseNoSharedCounters() {
    Device elsewhere = new DeviceBuilder(device("d")).withNodeName("other-node").build();
    assertRejected(List.of(new Pool("p", List.of(elsewhere))), "nodeName, nodeSelector and allNodes must not be set");
    Device counters = new DeviceBuilder(device("d")).addNewConsumesCounter().withCounterSet("s").endConsumesCounter()
        .build();
    assertRejected(List.of(new Pool("p", List.of(counters))), "consumesCounters is not supported");
  }

  @Test
  void listsAtMostTenProblems() {
    List<Device> devices = IntStream.range(0, 12).mapToObj(i -> device("BAD" + i)).toList();
    assertRejected(List.of(new Pool("p", devices)), "device \"BAD9\"", "; and 2 more");
  }
}
