package dev.nodelet.testing.apiserver.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.Set;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA made for one server and the serving certificate it signs, both with fresh EC P-256 keys that never leave
 * memory: clients trust the CA ({@link #caPem()}, a kubeconfig's {@code certificate-authority-data}) and verify the
 * host name as they would against a cluster, so nobody needs {@code insecure-skip-tls-verify}.
 */
public final class ServingCertificates {

  private static final Duration VALIDITY = Duration.ofDays(365);
  private static final String SIGNATURE = "SHA256withECDSA";

  private final X509Certificate ca;
  private final X509Certificate serving;
  private final KeyPair servingKeys;
  private final char[] storePassword;

  private ServingCertificates(X509Certificate ca, X509Certificate serving, KeyPair servingKeys) {
    this.ca = ca;
    this.serving = serving;
    this.servingKeys = servingKeys;
    this.storePassword = new BigInteger(64, new SecureRandom()).toString(36).toCharArray();
  }

  /**
   * Issues a CA and a serving certificate for {@code localhost}, the loopback addresses and {@code address} (what the
   * server listens on; a wildcard address adds nothing).
   */
  public static ServingCertificates issue(InetAddress address) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      KeyPair caKeys = generator.generateKeyPair();
      KeyPair servingKeys = generator.generateKeyPair();
      Instant now = Instant.now();
      // a little in the past: a client whose clock is slightly behind still accepts the certificates
      Date from = Date.from(now.minus(Duration.ofHours(1)));
      Date until = Date.from(now.plus(VALIDITY));
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();

      X500Name caName = new X500Name("CN=nodelet-embedded-ca");
      X509v3CertificateBuilder caBuilder = new JcaX509v3CertificateBuilder(caName, serial(), from, until, caName,
          caKeys.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false,
              extensions.createSubjectKeyIdentifier(caKeys.getPublic()));
      X509Certificate ca = sign(caBuilder, caKeys);

      Set<GeneralName> names = new LinkedHashSet<>();
      names.add(new GeneralName(GeneralName.dNSName, "localhost"));
      names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
      names.add(new GeneralName(GeneralName.iPAddress, "::1"));
      if (!address.isAnyLocalAddress()) {
        names.add(new GeneralName(GeneralName.iPAddress, address.getHostAddress()));
      }
      X509v3CertificateBuilder servingBuilder = new JcaX509v3CertificateBuilder(ca, serial(), from, until,
          new X500Name("CN=nodelet-embedded-apiserver"), servingKeys.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
          .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
          .addExtension(Extension.subjectAlternativeName, false,
              new GeneralNames(names.toArray(GeneralName[]::new)))
          .addExtension(Extension.authorityKeyIdentifier, false, extensions.createAuthorityKeyIdentifier(ca));
      return new ServingCertificates(ca, sign(servingBuilder, caKeys), servingKeys);
    } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
      throw new IllegalStateException("cannot issue the embedded API server's certificates", e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(63, new SecureRandom()).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair issuer)
      throws OperatorCreationException, GeneralSecurityException {
    ContentSigner signer = new JcaContentSignerBuilder(SIGNATURE).build(issuer.getPrivate());
    return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
  }

  /** The CA certificate in PEM, as a kubeconfig's {@code certificate-authority-data} holds it (base64 of this). */
  public String caPem() {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
      pem.writeObject(ca);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  public X509Certificate ca() {
    return ca;
  }

  /** The serving key and its chain as a PKCS#12 store, protected by {@link #storePassword()}. */
  public byte[] servingKeyStore() {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("serving", servingKeys.getPrivate(), storePassword, new Certificate[] {serving, ca});
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      store.store(out, storePassword);
      return out.toByteArray();
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot store the embedded API server's serving key", e);
    }
  }

  public String storePassword() {
    return new String(storePassword);
  }
}
