package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.Pool;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
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
  void devicesBelongToThisNode() {
    Device elsewhere = new DeviceBuilder(device("d")).withNodeName("other-node").build();
    assertRejected(List.of(new Pool("p", List.of(elsewhere))), "nodeName, nodeSelector and allNodes must not be set");
  }

  private static CounterSet counterSet(String name, String... counters) {
    CounterSetBuilder set = new CounterSetBuilder().withName(name);
    for (String counter : counters) {
      set.addToCounters(counter, new Counter(new Quantity("10Gi")));
    }
    return set.build();
  }

  private static Device consuming(String name, String set, String... counters) {
    DeviceBuilder device = new DeviceBuilder(device(name));
    var consumption = device.addNewConsumesCounter().withCounterSet(set);
    for (String counter : counters) {
      consumption.addToCounters(counter, new Counter(new Quantity("1Gi")));
    }
    return consumption.endConsumesCounter().build();
  }

  @Test
  void devicesConsumeCountersOfTheirPoolsCounterSets() {
    assertThatCode(() -> DriverDataValidator.validate(DRIVER, List.of(new Pool("p",
        List.of(consuming("part-0", "gpu-0", "memory"), consuming("part-1", "gpu-0", "memory", "slices")),
        List.of(counterSet("gpu-0", "memory", "slices")))))).doesNotThrowAnyException();
    assertRejected(List.of(new Pool("p", List.of(consuming("d", "gpu-9", "memory")),
        List.of(counterSet("gpu-0", "memory")))),
        "pool \"p\": device \"d\": consumesCounters \"gpu-9\": no counter set of this name in the pool's "
            + "sharedCounters");
    assertRejected(List.of(new Pool("p", List.of(consuming("d", "gpu-0", "cores")),
        List.of(counterSet("gpu-0", "memory")))),
        "device \"d\": consumesCounters \"gpu-0\": counter \"cores\" is not in that counter set");
    assertRejected(List.of(new Pool("p", List.of(), List.of(counterSet("gpu-0", "memory"),
        counterSet("gpu-0", "memory")))), "sharedCounters \"gpu-0\": more than one counter set of the pool");
    assertRejected(List.of(new Pool("p", List.of(), List.of(counterSet("GPU_0", "memory")))),
        "sharedCounters \"GPU_0\": the name must be a DNS label");
    assertRejected(List.of(new Pool("p", List.of(), List.of(counterSet("gpu-0")))),
        "sharedCounters \"gpu-0\": counters must hold 1 to 32 counters, it holds 0");
    assertRejected(List.of(new Pool("p", List.of(), List.of(counterSet("gpu-0",
        IntStream.range(0, 33).mapToObj(i -> "c" + i).toArray(String[]::new))))), "it holds 33");
    assertRejected(List.of(new Pool("p", List.of(), List.of(counterSet("gpu-0", "Memory_Bytes")))),
        "counter name \"Memory_Bytes\" must be a DNS label");
    Device three = new DeviceBuilder(consuming("d", "a", "m")).addNewConsumesCounter().withCounterSet("b")
        .addToCounters("m", new Counter(new Quantity("1"))).endConsumesCounter().addNewConsumesCounter()
        .withCounterSet("c").addToCounters("m", new Counter(new Quantity("1"))).endConsumesCounter().build();
    assertRejected(List.of(new Pool("p", List.of(three), List.of(counterSet("a", "m"), counterSet("b", "m"),
        counterSet("c", "m")))), "device \"d\": consumesCounters has 3 entries, at most 2 are allowed");
  }

  @Test
  void bindingConditionsComeWithFailureConditionsAtMostFourEach() {
    Device binding = new DeviceBuilder(device("d")).withBindsToNode(true)
        .withBindingConditions("example.com/attached").withBindingFailureConditions("example.com/failed").build();
    assertThatCode(() -> DriverDataValidator.validate(DRIVER, List.of(new Pool("p", List.of(binding)))))
        .doesNotThrowAnyException();
    assertRejected(List.of(new Pool("p", List.of(new DeviceBuilder(device("d"))
        .withBindingConditions("attached").build()))),
        "device \"d\": bindingConditions and bindingFailureConditions must be set together");
    assertRejected(List.of(new Pool("p", List.of(new DeviceBuilder(binding)
        .withBindingConditions("a", "b", "c", "d", "e").build()))),
        "device \"d\": bindingConditions: 5 entries, at most 4 are allowed");
    assertRejected(List.of(new Pool("p", List.of(new DeviceBuilder(binding)
        .withBindingFailureConditions("example.com/attached").build()))),
        "bindingFailureConditions must not repeat an entry of bindingConditions");
    assertRejected(List.of(new Pool("p", List.of(new DeviceBuilder(binding)
        .withBindingConditions("not a type").build()))),
        "bindingConditions: \"not a type\" is not a condition type");
  }

  @Test
  void listsAtMostTenProblems() {
    List<Device> devices = IntStream.range(0, 12).mapToObj(i -> device("BAD" + i)).toList();
    assertRejected(List.of(new Pool("p", devices)), "device \"BAD9\"", "; and 2 more");
  }
}
