package dev.nodelet.node.api.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The serving certificate: read from PEM files, or made at start, self-signed with a fresh EC P-256 key, with the
 * JDK alone (a few DER structures), as the kubelet makes one when it has no file and no certificate rotation.
 */
final class Certificates {

  private static final Pattern PEM = Pattern.compile(
      "-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
  private static final DateTimeFormatter UTC_TIME = DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'")
      .withZone(ZoneOffset.UTC);

  private Certificates() {
  }

  /** A key and its chain, the first certificate the key's. */
  record Identity(PrivateKey key, List<X509Certificate> chain) {
  }

  /** @throws IllegalArgumentException naming the file and what it must hold */
  static Identity read(Path certFile, Path keyFile) {
    List<X509Certificate> chain = certificates(certFile);
    List<byte[]> keys = blocks(keyFile, "PRIVATE KEY");
    if (keys.isEmpty()) {
      throw new IllegalArgumentException(keyFile + " holds no PKCS#8 key (BEGIN PRIVATE KEY); convert one with "
          + "openssl pkcs8 -topk8 -nocrypt");
    }
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(keys.get(0));
    for (String algorithm : List.of("EC", "RSA", "Ed25519")) {
      try {
        return new Identity(KeyFactory.getInstance(algorithm).generatePrivate(spec), chain);
      } catch (GeneralSecurityException e) {
        // the next algorithm
      }
    }
    throw new IllegalArgumentException(keyFile + " holds a key that is neither EC, RSA nor Ed25519");
  }

  /** @throws IllegalArgumentException naming the file when it holds no certificate */
  static List<X509Certificate> certificates(Path file) {
    List<X509Certificate> certificates = new ArrayList<>();
    try {
      CertificateFactory factory = CertificateFactory.getInstance("X.509");
      for (byte[] der : blocks(file, "CERTIFICATE")) {
        certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(file + " holds a certificate that cannot be read: " + e.getMessage(), e);
    }
    if (certificates.isEmpty()) {
      throw new IllegalArgumentException(file + " holds no PEM certificate (BEGIN CERTIFICATE)");
    }
    return certificates;
  }

  private static List<byte[]> blocks(Path file, String type) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
    }
    List<byte[]> found = new ArrayList<>();
    Matcher m = PEM.matcher(text);
    while (m.find()) {
      if (m.group(1).equals(type)) {
        found.add(Base64.getMimeDecoder().decode(m.group(2)));
      }
    }
    return found;
  }

  /** A self-signed serving certificate for {@code names} and {@code addresses}, valid a year. */
  static Identity selfSigned(String commonName, Collection<String> names, Collection<InetAddress> addresses) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      KeyPair keys = generator.generateKeyPair();
      Instant now = Instant.now();
      byte[] ecdsaSha256 = seq(oid(new int[] {1, 2, 840, 10045, 4, 3, 2}));
      byte[] name = seq(set(seq(oid(new int[] {2, 5, 4, 3}), tlv(0x0c, commonName.getBytes(StandardCharsets.UTF_8)))));
      ByteArrayOutputStream san = new ByteArrayOutputStream();
      for (String dns : names) {
        san.writeBytes(tlv(0x82, dns.getBytes(StandardCharsets.US_ASCII)));
      }
      for (InetAddress address : addresses) {
        san.writeBytes(tlv(0x87, address.getAddress()));
      }
      byte[] extensions = tlv(0xa3, seq(
          seq(oid(new int[] {2, 5, 29, 17}), tlv(0x04, seq(san.toByteArray()))),
          // basic constraints: not a CA
          seq(oid(new int[] {2, 5, 29, 19}), tlv(0x01, new byte[] {(byte) 0xff}), tlv(0x04, seq())),
          // extended key usage: serverAuth
          seq(oid(new int[] {2, 5, 29, 37}), tlv(0x04, seq(oid(new int[] {1, 3, 6, 1, 5, 5, 7, 3, 1}))))));
      byte[] tbs = seq(
          tlv(0xa0, tlv(0x02, new byte[] {2})),
          tlv(0x02, new BigInteger(63, new SecureRandom()).add(BigInteger.ONE).toByteArray()),
          ecdsaSha256, name,
          // a little in the past: a client whose clock is slightly behind still accepts it
          seq(utc(now.minus(Duration.ofHours(1))), utc(now.plus(Duration.ofDays(365)))),
          name, keys.getPublic().getEncoded(), extensions);
      Signature signer = Signature.getInstance("SHA256withECDSA");
      signer.initSign(keys.getPrivate());
      signer.update(tbs);
      byte[] signature = signer.sign();
      byte[] bits = new byte[signature.length + 1];
      System.arraycopy(signature, 0, bits, 1, signature.length);
      byte[] der = seq(tbs, ecdsaSha256, tlv(0x03, bits));
      X509Certificate certificate = (X509Certificate) CertificateFactory.getInstance("X.509")
          .generateCertificate(new ByteArrayInputStream(der));
      return new Identity(keys.getPrivate(), List.of(certificate));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot make a self-signed serving certificate: " + e.getMessage(), e);
    }
  }

  /** The PEM text of certificates, as a client's trust file or a CA file holds them. */
  static String pem(List<X509Certificate> certificates) {
    StringBuilder out = new StringBuilder();
    for (X509Certificate certificate : certificates) {
      try {
        out.append("-----BEGIN CERTIFICATE-----\n")
            .append(Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(certificate.getEncoded()))
            .append("\n-----END CERTIFICATE-----\n");
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }
    return out.toString();
  }

  /** The PEM text of a private key in PKCS#8. */
  static String pem(PrivateKey key) {
    return "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'})
        .encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n";
  }

  private static byte[] utc(Instant time) {
    return tlv(0x17, UTC_TIME.format(time).getBytes(StandardCharsets.US_ASCII));
  }

  private static byte[] oid(int[] arcs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(arcs[0] * 40 + arcs[1]);
    for (int i = 2; i < arcs.length; i++) {
      int arc = arcs[i];
      int shift = 28;
      while (shift > 0 && (arc >> shift) == 0) {
        shift -= 7;
      }
      for (; shift > 0; shift -= 7) {
        out.write(0x80 | ((arc >> shift) & 0x7f));
      }
      out.write(arc & 0x7f);
    }
    return tlv(0x06, out.toByteArray());
  }

  private static byte[] seq(byte[]... parts) {
    return tlv(0x30, concat(parts));
  }

  private static byte[] set(byte[]... parts) {
    return tlv(0x31, concat(parts));
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  private static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    int length = value.length;
    if (length < 0x80) {
      out.write(length);
    } else {
      byte[] bytes = BigInteger.valueOf(length).toByteArray();
      int skip = bytes[0] == 0 ? 1 : 0;
      out.write(0x80 | (bytes.length - skip));
      out.write(bytes, skip, bytes.length - skip);
    }
    out.writeBytes(value);
    return out.toByteArray();
  }
}
