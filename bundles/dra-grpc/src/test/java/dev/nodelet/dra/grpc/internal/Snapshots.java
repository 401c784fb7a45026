package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.grpc.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.v1.Device;
import dev.nodelet.dra.grpc.v1.DeviceAttribute;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesRequest;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import dev.nodelet.dra.grpc.v1.Pool;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Endpoint services for {@link FakeDriver}. */
final class Snapshots {

  private Snapshots() {
  }

  /** One pool of {@code count} devices, with an attribute of every kind and a capacity. */
  static ListAndWatchResourcesResponse devices(String pool, int count) {
    Pool.Builder builder = Pool.newBuilder().setName(pool);
    for (int i = 0; i < count; i++) {
      builder.addDevices(Device.newBuilder().setName("dev-" + i)
          .putAttributes("model", DeviceAttribute.newBuilder().setStringValue("a100").build())
          .putAttributes("index", DeviceAttribute.newBuilder().setIntValue(i).build())
          .putAttributes("ecc", DeviceAttribute.newBuilder().setBoolValue(true).build())
          .putAttributes("driverVersion", DeviceAttribute.newBuilder().setVersionValue("1.2.3").build())
          .putCapacity("memory", "80Gi"));
    }
    return ListAndWatchResourcesResponse.newBuilder().addPools(builder).build();
  }

  /** Sends the snapshot and keeps the stream open, like a driver waiting for changes. */
  static DRAPluginGrpc.DRAPluginImplBase sending(ListAndWatchResourcesResponse snapshot) {
    return serving(snapshot, false);
  }

  /** Sends the snapshot and ends the stream, like a driver whose devices never change. */
  static DRAPluginGrpc.DRAPluginImplBase sendingOnce(ListAndWatchResourcesResponse snapshot) {
    return serving(snapshot, true);
  }

  private static DRAPluginGrpc.DRAPluginImplBase serving(ListAndWatchResourcesResponse snapshot, boolean end) {
    return new DRAPluginGrpc.DRAPluginImplBase() {
      @Override
      public void listAndWatchResources(ListAndWatchResourcesRequest request,
          StreamObserver<ListAndWatchResourcesResponse> response) {
        response.onNext(snapshot);
        if (end) {
          response.onCompleted();
        }
      }
    };
  }

  /** Sends bytes that are not a ListAndWatchResourcesResponse, under the method's name. */
  static ServerServiceDefinition sendingBytes(byte[] bytes) {
    MethodDescriptor<ListAndWatchResourcesRequest, byte[]> method = DRAPluginGrpc.getListAndWatchResourcesMethod()
        .toBuilder(ProtoUtils.marshaller(ListAndWatchResourcesRequest.getDefaultInstance()), new Bytes()).build();
    return ServerServiceDefinition.builder(DRAPluginGrpc.SERVICE_NAME)
        .addMethod(method, ServerCalls.asyncServerStreamingCall((request, response) -> response.onNext(bytes)))
        .build();
  }

  private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
